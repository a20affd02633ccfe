/** The HTTP adapter: the one frame around every way in, the operation routes with the {scope} dispatch, and the app routes' adapter. */
export { appBaseOf } from './appBase';
export { appHandlerOn } from './appHandler';
export type { AppCall } from './appHandler';
export { framed } from './callFrame';
export type { FramedCall, ServicesSource } from './callFrame';
export { operationHandler, scopeDispatcher, scopeRouteMethods, scopeRouteTemplate } from './operationRoute';
export type { OperationHandler } from './operationRoute';
export { bodyBytesOf } from './requestBody';
