/**
 * The app's own routes, declared once like the catalogue's operations: functions/ registers
 * them from here and the OpenAPI document describes them from here. Like an operation's, a
 * route's schemas are built when first read (src/fieldsOnFirstRead.ts).
 */
import { z } from 'zod';
import type { HttpMethod } from './spec/catalogue';
import { withFieldsOnFirstRead } from './fieldsOnFirstRead';
import { environmentId, projectId } from './spec/lifecycle';

export interface AppRoute {
  name: string;
  method: HttpMethod;
  route: string;
  authLevel: 'function' | 'anonymous';
  /** For ACCESS_POLICY: `read` (status, lists, validation, metadata) or `write` (terminate, purge, refresh). */
  access: 'read' | 'write';
  /** Acts on nothing a scope names (the certificate routes): a rule limited to scopes never grants it. */
  unscoped?: true;
  /**
   * Reads one orchestration: its starter may call it on that orchestration without a rule
   * allowing the route, as a start grants following it (reading and waiting on it).
   */
  openToStarter?: true;
  summary: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

type Description = Pick<AppRoute, 'params' | 'query' | 'body' | 'responses'>;
const describedFields: readonly (keyof Description)[] = ['params', 'query', 'body', 'responses'];

/** A route: what it declares outright, and its description, built on the first read of it. */
function appRoute(entry: Omit<AppRoute, keyof Description>, describe: (schemas: RouteSchemas) => Description): AppRoute {
  return withFieldsOnFirstRead(entry, describedFields, () => describe(routeSchemas()));
}

/** A chat platform's endpoint: anonymous (the platform signs each request), the same answers, its own body and signature. */
function chatopsRoute(platform: 'slack' | 'teams', text: { summary: string; body: string; answer: string; signature: string }): AppRoute {
  const name = platform === 'slack' ? 'Slack' : 'Teams';
  return appRoute({ name: `chatops-${platform}`, method: 'POST', route: `chatops/${platform}`, authLevel: 'anonymous', access: 'write', tag: 'chatops', summary: text.summary }, () => ({
    body: z.looseObject({}).describe(text.body),
    responses: {
      200: { description: `${text.answer}: the answer, a refusal or the usage message` },
      401: { description: `Unauthorized: ${text.signature}, a timestamp too far from now, or a replay` },
      404: { description: `Chat-ops for ${name} is not configured` },
      413: { description: 'Larger than CHATOPS_MAX_BODY_BYTES' },
    },
  }));
}

type RouteSchemas = ReturnType<typeof buildRouteSchemas>;
let sharedSchemas: RouteSchemas | undefined;
/** Built once, so every route that shares a schema describes it with the same one. */
const routeSchemas = () => (sharedSchemas ??= buildRouteSchemas());

/** The schemas the routes are described with, built when the OpenAPI document first reads one. */
function buildRouteSchemas() {
  const orchestrationId = z.object({ id: z.guid() });
  const validationResult = z.object({
    valid: z.boolean(),
    checked: z.number().int(),
    errorCount: z.number().int().describe('Every error found; `errors` lists the first 100.'),
    errors: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
    warnings: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })).optional(),
  });
  const statusDocument = z.looseObject({
    id: z.string(),
    name: z.string(),
    runtimeStatus: z.enum(['Pending', 'Running', 'Completed', 'Failed', 'Terminated']),
    input: z.unknown(),
    output: z.unknown(),
    customStatus: z.unknown(),
    upstreamRequestIds: z
      .object({ requestId: z.string().optional(), correlationRequestId: z.string().optional() })
      .nullable()
      .optional()
      .describe("The upstream's x-ms-request-id and x-ms-correlation-request-id of the start, which its support asks for; null when it gave none."),
    createdTime: z.string(),
    lastUpdatedTime: z.string(),
    statusQueryGetUri: z.string(),
    terminatePostUri: z.string(),
    operationGetUri: z.string(),
  });
  const listEntry = z.object({
    id: z.string(),
    name: z.string(),
    runtimeStatus: statusDocument.shape.runtimeStatus,
    createdTime: z.string(),
    lastUpdatedTime: z.string(),
    statusQueryGetUri: z.string(),
    terminatePostUri: z.string(),
    operationGetUri: z.string(),
  });
  const purgeResult = z.object({ instancesDeleted: z.number().int() });
  const purgeFilter = z.object({
    runtimeStatus: z.string().optional().describe('Comma-separated: Pending, Running, Completed, Failed, Terminated'),
    name: z.string().optional().describe('Comma-separated operation ids, e.g. ContainerGroups_CreateOrUpdate'),
    createdTimeFrom: z.string().optional().describe('ISO 8601'),
    createdTimeTo: z.string().optional().describe('ISO 8601'),
    instanceIdPrefix: z.string().optional(),
  });
  const waitQuery = z.object({ 'gateway-wait': z.string().regex(/^\d+$/).optional().describe('Seconds to hold the answer until the orchestration ends (at most GATEWAY_WAIT_MAX_SECONDS)') });
  const refreshOutcome = z.looseObject({
    projectId: z.number().int(),
    environmentId: z.string(),
    outcome: z.enum(['downloaded', 'fresh', 'rate-limited', 'failed']),
    thumbprint: z.string().optional(),
    expiresAt: z.string().optional(),
    retryAt: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  });
  const declarationBody = z.looseObject({}).describe('One resource declaration, or a template whose `resources` array holds them.');
  return { orchestrationId, validationResult, statusDocument, listEntry, purgeResult, purgeFilter, waitQuery, refreshOutcome, declarationBody };
}

/** The answer of a `gateway-wait` past the bounds on held waits. */
const tooManyWaits = { description: 'TooManyWaits: the caller or the instance holds as many gateway-wait answers as it may (GATEWAY_WAIT_MAX_PER_CALLER, GATEWAY_WAIT_MAX_PER_INSTANCE); Retry-After says when' };

export const appRoutes = {
  orchestrationsGet: appRoute(
    {
      name: 'orchestrations-get', method: 'GET', route: 'orchestrations/{id}', authLevel: 'function', access: 'read', openToStarter: true, tag: 'orchestrations',
      summary: 'Status document of an orchestration (202 with Retry-After while it runs)',
    },
    ({ orchestrationId, statusDocument, waitQuery }) => ({
      params: orchestrationId,
      query: waitQuery,
      responses: { 200: { description: 'Finished', schema: statusDocument }, 202: { description: 'Still running', schema: statusDocument }, 429: tooManyWaits },
    }),
  ),
  orchestrationsList: appRoute(
    {
      name: 'orchestrations-list', method: 'GET', route: 'orchestrations', authLevel: 'function', access: 'read', tag: 'orchestrations',
      summary: 'A page of orchestrations (no input or output unless showInput=true), filtered; x-ms-continuation-token reads on',
    },
    ({ listEntry, purgeFilter }) => ({
      query: purgeFilter.extend({
        top: z.string().regex(/^[1-9][0-9]*$/).optional().describe('Most entries answered: 1 to 1000, default 100'),
        showInput: z.enum(['true', 'false']).optional().describe('Include each input; the answer ends where the documents read for them would pass ORCHESTRATION_LIST_INPUT_BYTES (at least one entry), and the continuation token reads on'),
      }),
      responses: {
        200: {
          description: 'The orchestrations in id order; the x-ms-continuation-token header, when present, reads on (send it back as a request header)',
          schema: z.object({ value: z.array(listEntry) }),
        },
      },
    }),
  ),
  orchestrationsPurge: appRoute(
    {
      name: 'orchestrations-purge', method: 'DELETE', route: 'orchestrations/{id}', authLevel: 'function', access: 'write', tag: 'orchestrations',
      summary: 'Purge an ended orchestration (409 while it runs)',
    },
    ({ orchestrationId, purgeResult }) => ({
      params: orchestrationId,
      responses: { 200: { description: 'Purged', schema: purgeResult }, 404: { description: 'No such orchestration' }, 409: { description: 'Still running (OrchestrationRunning)' } },
    }),
  ),
  orchestrationsPurgeMany: appRoute(
    {
      name: 'orchestrations-purge-many', method: 'DELETE', route: 'orchestrations', authLevel: 'function', access: 'write', tag: 'orchestrations',
      summary: 'Purge the ended orchestrations matching a filter (at least one filter; a bounded batch per request, x-ms-continuation-token goes on)',
    },
    ({ purgeResult, purgeFilter }) => ({
      query: purgeFilter,
      responses: { 200: { description: 'How many were purged; x-ms-continuation-token, when present, purges on', schema: purgeResult } },
    }),
  ),
  orchestrationsTerminate: appRoute(
    {
      name: 'orchestrations-terminate', method: 'POST', route: 'orchestrations/{id}/terminate', authLevel: 'function', access: 'write', tag: 'orchestrations',
      summary: 'Stop tracking an orchestration',
    },
    ({ orchestrationId, statusDocument }) => ({
      params: orchestrationId,
      query: z.object({ reason: z.string().optional() }),
      responses: { 202: { description: 'Terminated', schema: statusDocument }, 410: { description: 'Already ended (OrchestrationEnded): nothing to terminate' } },
    }),
  ),
  operationsGet: appRoute(
    {
      name: 'operations-get', method: 'GET', route: 'operations/{id}', authLevel: 'function', access: 'read', openToStarter: true, tag: 'orchestrations',
      summary: "The operation in the upstream's polling protocol: 202 + Retry-After while running, then its final status and body",
    },
    ({ orchestrationId, waitQuery }) => ({
      params: orchestrationId,
      query: waitQuery,
      responses: { 200: { description: 'The final resource or result' }, 202: { description: 'Still running; follow Location after Retry-After' }, 429: tooManyWaits },
    }),
  ),
  certificatesRefresh: appRoute(
    {
      name: 'certificates-refresh', method: 'POST', route: 'certificates/refresh', authLevel: 'function', access: 'write', unscoped: true, tag: 'certificates',
      summary: 'Refresh one configured environment, or all, under the rate limit',
    },
    ({ refreshOutcome }) => ({
      body: z.object({ projectId: z.number().int().optional(), environmentId: z.guid().optional(), force: z.boolean().optional() }),
      responses: { 200: { description: 'What happened per environment', schema: z.object({ results: z.array(refreshOutcome) }) } },
    }),
  ),
  certificatesGet: appRoute(
    {
      name: 'certificates-get', method: 'GET', route: 'certificates/{projectId}/{environmentId}', authLevel: 'function', access: 'read', unscoped: true, tag: 'certificates',
      summary: 'Metadata of the stored certificate (never the secret) and the last attempt',
    },
    () => ({
      params: z.object({ projectId, environmentId }),
      responses: { 200: { description: 'Metadata' } },
    }),
  ),
  validateGalleryImageVersions: appRoute(
    {
      name: 'templates-galleryImageVersions-validate', method: 'POST', route: 'templates/galleryImageVersions/validate', authLevel: 'function', access: 'read', tag: 'templates',
      summary: 'Validate gallery image version declarations',
    },
    ({ validationResult, declarationBody }) => ({
      body: declarationBody,
      responses: { 200: { description: 'The verdict, with the JSON path and code of each problem', schema: validationResult } },
    }),
  ),
  validateApis: appRoute(
    {
      name: 'templates-apis-validate', method: 'POST', route: 'templates/apis/validate', authLevel: 'function', access: 'read', tag: 'templates',
      summary: 'Validate API definition declarations',
    },
    ({ validationResult, declarationBody }) => ({
      body: declarationBody,
      responses: { 200: { description: 'The verdict, with the JSON path and code of each problem', schema: validationResult } },
    }),
  ),
  buildGatewayProperties: appRoute(
    {
      name: 'templates-gatewayCustomProperties-build', method: 'POST', route: 'templates/gatewayCustomProperties/build', authLevel: 'function', access: 'read', tag: 'templates',
      summary: 'The complete set of gateway TLS and cipher custom properties for the wanted settings',
    },
    () => ({
      body: z.looseObject({}).describe('{ serviceCreatedOnOrBefore20180401?, clientProtocols?, backendProtocols?, tripleDes168?, http2?, ciphers? }'),
      responses: { 200: { description: 'customProperties with every key', schema: z.object({ customProperties: z.record(z.string(), z.string()) }) } },
    }),
  ),
  validateGatewayProperties: appRoute(
    {
      name: 'templates-gatewayCustomProperties-validate', method: 'POST', route: 'templates/gatewayCustomProperties/validate', authLevel: 'function', access: 'read', tag: 'templates',
      summary: "Check a service resource's customProperties",
    },
    ({ validationResult }) => ({
      body: z.looseObject({}).describe('A service resource, or { customProperties }'),
      responses: { 200: { description: 'Errors, and warnings for keys a PATCH would reset', schema: validationResult } },
    }),
  ),
  chatopsSlack: chatopsRoute('slack', {
    summary: 'A Slack slash command, verified by its X-Slack-Signature (off until SLACK_SIGNING_SECRET and a rule naming slack: callers are set)',
    body: 'application/x-www-form-urlencoded: team_id, user_id, text, response_url, as Slack sends them',
    answer: 'The ephemeral Block Kit message Slack shows the user',
    signature: 'no valid signature',
  }),
  chatopsTeams: chatopsRoute('teams', {
    summary: 'A Teams outgoing webhook activity, verified by its Authorization: HMAC (off until TEAMS_WEBHOOK_SECRET and a rule naming teams: callers are set)',
    body: 'The message activity Teams sends: text, from.aadObjectId, channelData.tenant.id, timestamp',
    answer: 'A message activity with an Adaptive Card',
    signature: 'no valid HMAC',
  }),
  health: appRoute(
    {
      name: 'health', method: 'GET', route: 'health', authLevel: 'anonymous', access: 'read', tag: 'app',
      summary: "Liveness: the app's version, whether storage and each upstream answer, and which configured certificates run out",
    },
    () => ({
      responses: { 200: { description: 'Healthy' }, 503: { description: 'A dependency does not answer, or a certificate is within CERT_ALERT_DAYS of expiry with its refresh failing' } },
    }),
  ),
  consolePage: appRoute(
    {
      name: 'console', method: 'GET', route: 'console', authLevel: 'anonymous', access: 'read', tag: 'console',
      summary: 'The operator console: a page that holds no data (it reads the keyed routes with the key its user pastes)',
    },
    () => ({
      responses: {
        200: { description: 'The page (text/html) with a Content-Security-Policy that allows only this origin and no framing' },
        301: { description: 'At `console/` (a trailing slash): `Location: ../console`, where the page\'s relative links resolve' },
      },
    }),
  ),
  consoleAsset: appRoute(
    {
      name: 'console-asset', method: 'GET', route: 'console/assets/{file}', authLevel: 'anonymous', access: 'read', tag: 'console',
      summary: "The console's script and style sheet (console.js, console.css)",
    },
    () => ({
      params: z.object({ file: z.enum(['console.js', 'console.css']) }),
      responses: { 200: { description: 'The file, with the console\'s Content-Security-Policy' } },
    }),
  ),
  consoleSession: appRoute(
    {
      name: 'console-session', method: 'GET', route: 'console/session', authLevel: 'function', access: 'read', tag: 'console',
      summary: 'Who the caller is taken for, which actions ACCESS_POLICY lets it take, and the certificate environments it may read',
    },
    () => ({
      responses: {
        200: {
          description: 'The caller and its rights',
          schema: z.object({
            caller: z.string(),
            sees: z.enum(['all', 'admin-scopes', 'own']),
            may: z.object({ terminate: z.boolean(), purge: z.boolean(), refreshCertificates: z.boolean() }),
            list: z.object({ pageSize: z.number().int(), histogramMaxStarts: z.number().int() }),
            certificates: z.object({ alertDays: z.number(), environments: z.array(z.object({ projectId: z.number().int(), environmentId: z.string() })) }).nullable(),
          }),
        },
      },
    }),
  ),
  openApi: appRoute(
    {
      name: 'openapi', method: 'GET', route: 'openapi.json', authLevel: 'function', access: 'read', tag: 'app',
      summary: 'This document',
    },
    () => ({
      responses: { 200: { description: 'OpenAPI 3.1' } },
    }),
  ),
} satisfies Record<string, AppRoute>;

/** The options app.http takes for a declared route. */
/** What the access policy judges of a call to `route` (src/access/accessPolicy.ts). */
export function actionOf(route: AppRoute) {
  return { names: [route.name], access: route.access, unscoped: route.unscoped };
}

export function registrationOf(route: AppRoute) {
  return { methods: [route.method], route: route.route, authLevel: route.authLevel };
}
