/**
 * How the app's own routes are declared (src/routes/appRoutes.ts lists them): a route's shape, its
 * description built on first read (src/loading/fieldsOnFirstRead.ts), the schemas routes share, and what
 * the access policy and app.http take of a route.
 */
import { z } from 'zod';
import type { HttpMethod } from '../spec';
import { withFieldsOnFirstRead } from '../loading';

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
  /**
   * Reached by a caller some rule names as an approver (docs/approvals.md) without a rule
   * allowing the route: the handler answers on what it may approve only.
   */
  openToApprovers?: true;
  summary: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

export type Description = Pick<AppRoute, 'params' | 'query' | 'body' | 'responses'>;
const describedFields: readonly (keyof Description)[] = ['params', 'query', 'body', 'responses'];

/** A route: what it declares outright, and its description, built on the first read of it. */
export function appRoute(entry: Omit<AppRoute, keyof Description>, describe: (schemas: RouteSchemas) => Description): AppRoute {
  return withFieldsOnFirstRead(entry, describedFields, () => describe(routeSchemas()));
}

export type RouteSchemas = ReturnType<typeof buildRouteSchemas>;
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
  const bulkFilter = purgeFilter.extend({ dryRun: z.enum(['true', 'false']).optional().describe('Change nothing; answer what would be acted on') });
  const bulkResult = z.object({
    dryRun: z.literal(true).optional(),
    count: z.number().int().describe('Orchestrations this request selected (at most ORCHESTRATION_BULK_BATCH)'),
    instanceIds: z.array(z.string()).optional().describe('With dryRun: the ones that would be acted on'),
    done: z.number().int().optional(),
    results: z
      .array(
        z.object({
          instanceId: z.string(),
          status: z.number().int(),
          restartedAs: z.string().optional(),
          error: z.object({ code: z.string(), message: z.string() }).optional(),
        }),
      )
      .optional()
      .describe("Without dryRun: each one's outcome, with the status its own call would have answered"),
  });
  const waitQuery = z.object({
    'gateway-wait': z.string().regex(/^\d+$/).optional().describe('Seconds to hold the answer until the orchestration ends (at most GATEWAY_WAIT_MAX_SECONDS)'),
  });
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
  return {
    orchestrationId,
    validationResult,
    statusDocument,
    listEntry,
    purgeResult,
    purgeFilter,
    bulkFilter,
    bulkResult,
    waitQuery,
    refreshOutcome,
    declarationBody,
  };
}

/** The answer of a `gateway-wait` past the bounds on held waits. */
export const tooManyWaits = {
  description:
    'TooManyWaits: the caller or the instance holds as many gateway-wait answers as it may (GATEWAY_WAIT_MAX_PER_CALLER, GATEWAY_WAIT_MAX_PER_INSTANCE); Retry-After says when',
};

/** What the access policy judges of a call to `route` (src/access/accessPolicy.ts). */
export function actionOf(route: AppRoute) {
  return { names: [route.name], access: route.access, unscoped: route.unscoped };
}

/** The options app.http takes for a declared route. */
export function registrationOf(route: AppRoute) {
  return { methods: [route.method], route: route.route, authLevel: route.authLevel };
}
