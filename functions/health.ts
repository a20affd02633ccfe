/** `GET health` (anonymous, as only the console's page and files are besides) and `GET openapi.json`. */
import { appRoutes } from '../src/routes';
import { getServices } from '../src/app';
import { appHandlerOn } from '../src/http';
import { jsonResponse } from '../src/calls';
import { buildOpenApiDocument } from '../src/openapi';
import { appVersion } from '../src/version';

const appHandler = appHandlerOn(getServices);

export const getHealth = appHandler(appRoutes.health, async (call) => {
  const report = await call.services.health.report();
  return jsonResponse(report.status === 'Healthy' ? 200 : 503, report, call.correlationId);
});

let openApiText: string | undefined;

export const getOpenApi = appHandler(appRoutes.openApi, async (call) => {
  // Built once per process: it depends on the settings only.
  openApiText ??= JSON.stringify(buildOpenApiDocument({ providerNamespace: call.services.config.PROVIDER_NAMESPACE, version: appVersion }));
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: openApiText };
});
