/** Validation of gallery image version and API definition declarations and the gateway custom properties. Glue only: the rules are in src/templates. */
import { appRoutes, type AppRoute } from '../src/routes';
import { GatewayError } from '../src/errors';
import { getServices } from '../src/app';
import { appHandlerOn, type AppCall } from '../src/http';
import { parseJsonBody } from '../src/rules';
import { jsonResponse } from '../src/calls';
import { invalidRequest, ProblemList } from '../src/rules';
import { apiDefinitionKind } from '../src/templates';
import { validateDeclarations, type DeclarationKind } from '../src/templates';
import { galleryImageVersionKind } from '../src/templates';
import { buildCustomProperties, gatewaySettingsRequest, validateCustomProperties } from '../src/templates';

const appHandler = appHandlerOn(getServices);

async function jsonBodyOf(call: AppCall): Promise<unknown> {
  const body = parseJsonBody(
    new Uint8Array(await call.request.arrayBuffer()),
    call.request.headers.get('content-type'),
    call.services.config.MAX_REQUEST_BODY_BYTES,
    'body',
  );
  if (!body) throw new GatewayError('InvalidRequest', 'A JSON body is required.', { target: 'body' });
  return body.value;
}

const validator = (route: AppRoute, kind: DeclarationKind) =>
  appHandler(route, async (call) => jsonResponse(200, validateDeclarations(await jsonBodyOf(call), kind), call.correlationId));

export const validateGalleryImageVersions = validator(appRoutes.validateGalleryImageVersions, galleryImageVersionKind);
export const validateApis = validator(appRoutes.validateApis, apiDefinitionKind);

export const buildGatewayProperties = appHandler(appRoutes.buildGatewayProperties, async (call) => {
  const parsed = gatewaySettingsRequest.safeParse(await jsonBodyOf(call));
  if (!parsed.success) throw invalidRequest(ProblemList.ofIssues(parsed.error.issues, 'InvalidRequestBody'), 'The settings are not valid.');
  const built = buildCustomProperties(parsed.data, call.services.config.GATEWAY_PROPERTY_PREFIX);
  if (!built.ok) {
    throw invalidRequest(ProblemList.of(built.errors.map((error) => ({ code: error.code, message: error.message, target: error.path }))));
  }
  return jsonResponse(200, { customProperties: built.customProperties }, call.correlationId);
});

export const validateGatewayProperties = appHandler(appRoutes.validateGatewayProperties, async (call) => {
  const { errors, warnings } = validateCustomProperties(await jsonBodyOf(call), call.services.config.GATEWAY_PROPERTY_PREFIX);
  return jsonResponse(200, { ...errors.result(1), warnings }, call.correlationId);
});
