/**
 * The app's own routes, declared once like the catalogue's operations: functions/ registers
 * them from here and the OpenAPI document describes them from here (src/routes/routeKit.ts says how
 * a route is declared).
 */
import { z } from 'zod';
import { appRoute, type AppRoute } from './routeKit';
import { orchestrationRoutes } from './orchestrationRoutes';
import { approvalChatRoutes } from './chatRoutes';
import { approvalRoutes } from './approvalRoutes';
import { environmentId, projectId } from '../spec';

export { actionOf, registrationOf, type AppRoute } from './routeKit';

/** A chat platform's endpoint: anonymous (the platform signs each request), the same answers, its own body and signature. */
function chatopsRoute(platform: 'slack' | 'teams', text: { summary: string; body: string; answer: string; signature: string }): AppRoute {
  const name = platform === 'slack' ? 'Slack' : 'Teams';
  return appRoute(
    {
      name: `chatops-${platform}`,
      method: 'POST',
      route: `chatops/${platform}`,
      authLevel: 'anonymous',
      access: 'write',
      tag: 'chatops',
      summary: text.summary,
    },
    () => ({
      body: z.looseObject({}).describe(text.body),
      responses: {
        200: { description: `${text.answer}: the answer, a refusal or the usage message` },
        401: { description: `Unauthorized: ${text.signature}, a timestamp too far from now, or a replay` },
        404: { description: `Chat-ops for ${name} is not configured` },
        413: { description: 'Larger than CHATOPS_MAX_BODY_BYTES' },
      },
    }),
  );
}

export const appRoutes = {
  ...orchestrationRoutes,
  certificatesRefresh: appRoute(
    {
      name: 'certificates-refresh',
      method: 'POST',
      route: 'certificates/refresh',
      authLevel: 'function',
      access: 'write',
      unscoped: true,
      tag: 'certificates',
      summary: 'Refresh one configured environment, or all, under the rate limit',
    },
    ({ refreshOutcome }) => ({
      body: z.object({ projectId: z.number().int().optional(), environmentId: z.guid().optional(), force: z.boolean().optional() }),
      responses: { 200: { description: 'What happened per environment', schema: z.object({ results: z.array(refreshOutcome) }) } },
    }),
  ),
  certificatesGet: appRoute(
    {
      name: 'certificates-get',
      method: 'GET',
      route: 'certificates/{projectId}/{environmentId}',
      authLevel: 'function',
      access: 'read',
      unscoped: true,
      tag: 'certificates',
      summary: 'Metadata of the stored certificate (never the secret) and the last attempt',
    },
    () => ({
      params: z.object({ projectId, environmentId }),
      responses: { 200: { description: 'Metadata' } },
    }),
  ),
  validateGalleryImageVersions: appRoute(
    {
      name: 'templates-galleryImageVersions-validate',
      method: 'POST',
      route: 'templates/galleryImageVersions/validate',
      authLevel: 'function',
      access: 'read',
      tag: 'templates',
      summary: 'Validate gallery image version declarations',
    },
    ({ validationResult, declarationBody }) => ({
      body: declarationBody,
      responses: { 200: { description: 'The verdict, with the JSON path and code of each problem', schema: validationResult } },
    }),
  ),
  validateApis: appRoute(
    {
      name: 'templates-apis-validate',
      method: 'POST',
      route: 'templates/apis/validate',
      authLevel: 'function',
      access: 'read',
      tag: 'templates',
      summary: 'Validate API definition declarations',
    },
    ({ validationResult, declarationBody }) => ({
      body: declarationBody,
      responses: { 200: { description: 'The verdict, with the JSON path and code of each problem', schema: validationResult } },
    }),
  ),
  buildGatewayProperties: appRoute(
    {
      name: 'templates-gatewayCustomProperties-build',
      method: 'POST',
      route: 'templates/gatewayCustomProperties/build',
      authLevel: 'function',
      access: 'read',
      tag: 'templates',
      summary: 'The complete set of gateway TLS and cipher custom properties for the wanted settings',
    },
    () => ({
      body: z.looseObject({}).describe('{ serviceCreatedOnOrBefore20180401?, clientProtocols?, backendProtocols?, tripleDes168?, http2?, ciphers? }'),
      responses: { 200: { description: 'customProperties with every key', schema: z.object({ customProperties: z.record(z.string(), z.string()) }) } },
    }),
  ),
  validateGatewayProperties: appRoute(
    {
      name: 'templates-gatewayCustomProperties-validate',
      method: 'POST',
      route: 'templates/gatewayCustomProperties/validate',
      authLevel: 'function',
      access: 'read',
      tag: 'templates',
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
  ...approvalChatRoutes,
  ...approvalRoutes,
  chatopsTeams: chatopsRoute('teams', {
    summary: 'A Teams outgoing webhook activity, verified by its Authorization: HMAC (off until TEAMS_WEBHOOK_SECRET and a rule naming teams: callers are set)',
    body: 'The message activity Teams sends: text, from.aadObjectId, channelData.tenant.id, timestamp',
    answer: 'A message activity with an Adaptive Card',
    signature: 'no valid HMAC',
  }),
  health: appRoute(
    {
      name: 'health',
      method: 'GET',
      route: 'health',
      authLevel: 'anonymous',
      access: 'read',
      tag: 'app',
      summary: "Liveness: the app's version, whether storage and each upstream answer, and which configured certificates run out",
    },
    () => ({
      responses: {
        200: { description: 'Healthy' },
        503: { description: 'A dependency does not answer, or a certificate is within CERT_ALERT_DAYS of expiry with its refresh failing' },
      },
    }),
  ),
  consolePage: appRoute(
    {
      name: 'console',
      method: 'GET',
      route: 'console',
      authLevel: 'anonymous',
      access: 'read',
      tag: 'console',
      summary: 'The operator console: a page that holds no data (it reads the keyed routes with the key its user pastes)',
    },
    () => ({
      responses: {
        200: { description: 'The page (text/html) with a Content-Security-Policy that allows only this origin and no framing' },
        301: { description: "At `console/` (a trailing slash): `Location: ../console`, where the page's relative links resolve" },
      },
    }),
  ),
  consoleAsset: appRoute(
    {
      name: 'console-asset',
      method: 'GET',
      route: 'console/assets/{file}',
      authLevel: 'anonymous',
      access: 'read',
      tag: 'console',
      summary: "The console's script and style sheet (console.js, console.css)",
    },
    () => ({
      params: z.object({ file: z.enum(['console.js', 'console.css']) }),
      responses: { 200: { description: "The file, with the console's Content-Security-Policy" } },
    }),
  ),
  consoleSession: appRoute(
    {
      name: 'console-session',
      method: 'GET',
      route: 'console/session',
      authLevel: 'function',
      access: 'read',
      openToApprovers: true,
      tag: 'console',
      summary: 'Who the caller is taken for, which actions ACCESS_POLICY lets it take, and the certificate environments it may read',
    },
    () => ({
      responses: {
        200: {
          description: 'The caller and its rights',
          schema: z.object({
            caller: z.string(),
            sees: z.enum(['all', 'admin-scopes', 'own']),
            may: z.object({
              terminate: z.boolean(),
              purge: z.boolean(),
              restart: z.boolean(),
              terminateMany: z.boolean(),
              restartMany: z.boolean(),
              refreshCertificates: z.boolean(),
              approve: z.boolean().describe('Named as an approver by some rule: reads and decides the starts it may approve'),
            }),
            list: z.object({ pageSize: z.number().int(), histogramMaxStarts: z.number().int() }),
            certificates: z
              .object({ alertDays: z.number(), environments: z.array(z.object({ projectId: z.number().int(), environmentId: z.string() })) })
              .nullable(),
          }),
        },
      },
    }),
  ),
  openApi: appRoute(
    {
      name: 'openapi',
      method: 'GET',
      route: 'openapi.json',
      authLevel: 'function',
      access: 'read',
      tag: 'app',
      summary: 'This document',
    },
    () => ({
      responses: { 200: { description: 'OpenAPI 3.1' } },
    }),
  ),
} satisfies Record<string, AppRoute>;
