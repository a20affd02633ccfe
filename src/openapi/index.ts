/** The OpenAPI document of every route, built from the catalogue and the route declarations. */
export { buildOpenApiDocument } from './openApiDocument';
