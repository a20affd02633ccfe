/**
 * `GET orchestrations/counts?<filters>`: how many orchestrations the caller may see are in each
 * runtime status, from blob metadata alone, within the list's scan bounds. `complete: false`
 * says the count stopped at a bound and covers a part only; `x-ms-continuation-token` then counts
 * on from there (the caller adds the answers up).
 */
import type { HttpResponseInit } from '@azure/functions';
import type { RuntimeStatus } from '../orchestration';
import type { RouteCall } from './routeCall';
import { visibleFilter } from './authorization';
import { continuationHeader, countsRequestOf, runtimeStatuses, scanBoundsOf } from './orchestrationQueries';
import { jsonResponse } from './answers';

export async function orchestrationCounts(call: RouteCall): Promise<HttpResponseInit> {
  const { services } = call;
  const { filter, continuationToken } = countsRequestOf(call.query, call.headers);
  const bounds = scanBoundsOf(services.config);
  // One more than can be scanned: the answer then ends at the scan bound or at the last document, never at `top`.
  const page = await services.orchestrations.query({
    ...visibleFilter(services, call.caller, filter),
    top: bounds.maxScanned + 1,
    continuationToken,
    ...bounds,
  });
  const counts = Object.fromEntries(runtimeStatuses.map((status) => [status, 0])) as Record<RuntimeStatus, number>;
  for (const summary of page.summaries) counts[summary.runtimeStatus] = (counts[summary.runtimeStatus] ?? 0) + 1;
  const complete = page.continuationToken === undefined;
  return jsonResponse(200, { counts, complete }, call.correlationId, complete ? {} : { [continuationHeader]: page.continuationToken! });
}
