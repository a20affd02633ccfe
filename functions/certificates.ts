/**
 * The handlers of the certificate routes. Glue only: the work
 * is in src/certificates.
 */
import { z } from 'zod';
import type { CertificateEnvironment } from '../src/certificates';
import { appRoutes } from '../src/routes';
import { fetchedCertificate } from '../src/certificates';
import { GatewayError } from '../src/errors';
import { appHandlerOn, type AppCall } from '../src/http';
import { parseJsonBody } from '../src/rules';
import { jsonResponse } from '../src/calls';
import { detailsFromParameterIssues, invalidRequest, ProblemList } from '../src/rules';
import { getServices } from '../src/app';
import { environmentId, projectId } from '../src/spec';

const appHandler = appHandlerOn(getServices);

const refreshRequest = z.strictObject({
  projectId: z.number().int().nonnegative().optional(),
  environmentId: z.guid('environmentId must be a GUID').optional(),
  force: z.boolean().optional(),
});

const sameEnvironment = (a: CertificateEnvironment, b: CertificateEnvironment) =>
  a.projectId === b.projectId && a.environmentId.toLowerCase() === b.environmentId.toLowerCase();

/** The token for the lifecycle service: the caller's in passthrough mode, else the app's. */
async function lifecycleToken(call: AppCall): Promise<string> {
  if (call.services.tokens.mode === 'passthrough') {
    return call.services.tokens.getToken({ upstream: 'lifecycle', callerAuthorization: call.request.headers.get('authorization') ?? undefined });
  }
  const token = await call.services.backgroundToken('lifecycle');
  if (!token) throw new GatewayError('Unauthorized', 'No credential for the lifecycle service is configured.');
  return token;
}

export const refreshCertificates = appHandler(appRoutes.certificatesRefresh, async (call) => {
  const { config } = call.services;
  const body = parseJsonBody(new Uint8Array(await call.request.arrayBuffer()), call.request.headers.get('content-type'), 64 * 1024, 'body');
  const parsed = refreshRequest.safeParse(body?.value ?? {});
  if (!parsed.success) throw invalidRequest(ProblemList.ofIssues(parsed.error.issues, 'InvalidRequestBody'), 'The refresh request is not valid.');
  const { projectId: wantedProject, environmentId: wantedEnvironment, force = false } = parsed.data;
  if ((wantedProject === undefined) !== (wantedEnvironment === undefined)) {
    throw new GatewayError('InvalidRequest', 'Give both projectId and environmentId, or neither to refresh every configured environment.', { target: 'body' });
  }
  const environments =
    wantedProject === undefined
      ? config.CERT_ENVIRONMENTS
      : config.CERT_ENVIRONMENTS.filter((environment) => sameEnvironment(environment, { projectId: wantedProject, environmentId: wantedEnvironment! }));
  if (environments.length === 0) {
    throw new GatewayError(
      'NotFound',
      wantedProject === undefined ? 'No environment is configured in CERT_ENVIRONMENTS.' : 'That environment is not configured in CERT_ENVIRONMENTS.',
    );
  }
  const results = await call.services.certificates.refresher.refreshAll(environments, { force, trigger: 'refresh', token: await lifecycleToken(call) });
  return jsonResponse(200, { results }, call.correlationId);
});

const certificateParams = z.object({ projectId, environmentId });

export const getCertificate = appHandler(appRoutes.certificatesGet, async (call) => {
  const params = certificateParams.safeParse(call.request.params);
  if (!params.success)
    throw new GatewayError('InvalidRequest', 'The certificate path is not valid.', {
      details: detailsFromParameterIssues(params.error.issues, 'InvalidParameter'),
    });
  const environment = { projectId: Number(params.data.projectId), environmentId: params.data.environmentId.toLowerCase() };
  const record = await fetchedCertificate(call.services.certificates.store, environment.projectId, environment.environmentId);
  return jsonResponse(
    200,
    { ...environment, current: record.current ?? null, lastAttempt: record.lastAttempt ?? null, keptThumbprints: record.kept },
    call.correlationId,
  );
});
