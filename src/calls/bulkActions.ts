/**
 * `POST orchestrations/terminate?<filters>` and `POST orchestrations/restart?<filters>`: one
 * action on every orchestration the list's filters select that the caller may act on (the others
 * are left out, as the list leaves them out), ORCHESTRATION_BULK_BATCH per call, with
 * `x-ms-continuation-token` going on. `dryRun=true` changes nothing and answers what would be
 * acted on. Each restart is a start of its own (orchestrationRestart.ts), so each is judged as a
 * start is, and one refused is reported, not a failure of the call.
 */
import type { HttpResponseInit } from '@azure/functions';
import { mapConcurrently } from '../concurrency';
import { toGatewayError } from '../errors';
import { decodeCursor, encodeCursor } from '../orchestration';
import type { RouteCall } from './routeCall';
import { visibleFilter } from './authorization';
import { bulkRequestOf, continuationHeader, scanBoundsOf, type BulkAction } from './orchestrationQueries';
import { restartOrchestration } from './restart';
import { visibleOrchestration, type Viewer } from './orchestrationVisibility';
import { jsonResponse } from './answers';

/** Actions of one call made at once: restarts call the upstream, each drawing on the caller's share. */
const actionConcurrency = 4;
/**
 * How long one call starts actions for: a batch of restarts, each waiting up to the upstream's
 * timeout, must still be answered well within the 230 s the Azure front end holds a request,
 * or the caller would lose what was done and where to go on.
 */
const actionBudgetMs = 120_000;

/** What was done to one orchestration. */
export interface BulkOutcome {
  instanceId: string;
  /** The HTTP status the single call would have answered. */
  status: number;
  /** A restart's new orchestration. */
  restartedAs?: string;
  error?: { code: string; message: string };
}

/** The `error` of a refusal's body (the app's or the upstream's shape), if it has one. */
function errorOf(body: unknown): BulkOutcome['error'] {
  try {
    const error = (JSON.parse(String(body)) as { error?: { code?: unknown; message?: unknown } }).error;
    return error ? { code: String(error.code ?? ''), message: String(error.message ?? '').slice(0, 500) } : undefined;
  } catch {
    return undefined;
  }
}

/** One left out because the call's time ran out: the same call again (without the continuation token) picks it up. */
function notReached(id: string): BulkOutcome {
  const message = `Not acted on: this call's ${actionBudgetMs / 1000} s ran out first. Send the same call again without the continuation token; what was done is not done twice.`;
  return { instanceId: id, status: 503, error: { code: 'NotReached', message } };
}

async function actOn(action: BulkAction, call: RouteCall, viewer: Viewer, id: string, reason: string): Promise<BulkOutcome> {
  try {
    if (action === 'terminate') {
      await visibleOrchestration(viewer, id);
      await call.services.orchestrations.terminate(id, reason);
      return { instanceId: id, status: 202 };
    }
    const { response, restartedAs } = await restartOrchestration(call, viewer, id, { single: false });
    const status = response.status ?? 200;
    if (status >= 400) {
      const error = errorOf(response.body);
      return { instanceId: id, status, ...(error ? { error } : {}) };
    }
    return { instanceId: id, status, ...(restartedAs ? { restartedAs } : {}) };
  } catch (thrown) {
    const error = toGatewayError(thrown);
    return { instanceId: id, status: error.status, error: { code: error.code, message: error.message } };
  }
}

export async function bulkAction(action: BulkAction, call: RouteCall, viewer: Viewer): Promise<HttpResponseInit> {
  const { services } = call;
  const { query } = call;
  const { filter, dryRun, continuationToken, reason: given } = bulkRequestOf(action, query, call.headers);
  // Only what existed when the first batch was read: a restart's new orchestration is never acted on by a later batch.
  const asOf = (continuationToken && decodeCursor(continuationToken).asOf) || new Date(services.now()).toISOString();
  const createdTo = filter.createdTo && filter.createdTo < asOf ? filter.createdTo : asOf;
  const page = await services.orchestrations.query({
    ...visibleFilter(services, call.caller, { ...filter, createdTo }),
    top: services.config.ORCHESTRATION_BULK_BATCH,
    continuationToken,
    ...scanBoundsOf(services.config),
  });
  const next: Record<string, string> = page.continuationToken ? { [continuationHeader]: encodeCursor({ ...decodeCursor(page.continuationToken), asOf }) } : {};
  const instanceIds = page.summaries.map((summary) => summary.id);
  if (dryRun) return jsonResponse(200, { dryRun: true, count: instanceIds.length, instanceIds }, call.correlationId, next);
  const reason = given ?? `Terminated by a bulk terminate (${call.caller.primary}).`;
  const results = await mapConcurrently(instanceIds, actionConcurrency, (id) =>
    services.now() - call.startedMs < actionBudgetMs ? actOn(action, call, viewer, id, reason) : Promise.resolve(notReached(id)),
  );
  const done = results.filter((result) => result.status < 400).length;
  return jsonResponse(200, { count: instanceIds.length, done, results }, call.correlationId, next);
}
