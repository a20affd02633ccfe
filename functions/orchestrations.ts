/**
 * The handlers of the orchestration routes, with Durable Functions' names: status
 * (`gateway-wait` holds it until the end), list, terminate, purge, restart, the bulk terminate
 * and restart, counts, and the upstream-style `operations/{id}`. Glue only: the engine is in
 * src/orchestration, what the routes do in src/calls.
 */
import { appRoutes } from '../src/routes';
import { GatewayError } from '../src/errors';
import { appHandlerOn, type AppCall } from '../src/http';
import { operationAnswer, statusDocumentResponse } from '../src/calls';
import { continuationHeader, listRequestOf, purgeRequestOf, scanBoundsOf, waitSecondsOf } from '../src/calls';
import { restartOrchestration } from '../src/calls';
import { bulkAction } from '../src/calls';
import { orchestrationCounts } from '../src/calls';
import { visibleFilter } from '../src/calls';
import { visibleOrchestration, visibleStatus, type Viewer } from '../src/calls';
import { longestWaitSeconds, takeWaitSlot, waitForEnd } from '../src/calls';
import { callerReaderOf } from '../src/calls';
import { jsonResponse } from '../src/calls';
import { invalidRequest, ProblemList } from '../src/rules';
import type { OrchestrationState } from '../src/orchestration';
import { orchestrationLinks, statusDocument } from '../src/orchestration';
import { getServices } from '../src/app';

const appHandler = appHandlerOn(getServices);

const idPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function orchestrationId(call: AppCall): string {
  const id = call.request.params.id ?? '';
  if (!idPattern.test(id)) throw new GatewayError('NotFound', 'No orchestration has that id.', { target: 'id' });
  return id;
}

/** The caller of a route that names one orchestration, for the visibility checks. */
function viewerOf(call: AppCall): Viewer {
  return { ...call, routeName: call.routeName, notFound: (id) => new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' }) };
}

/**
 * The orchestration, read after the caller's request drove it where it may: in passthrough
 * mode the timer holds no token, so the caller's read makes a due poll with the caller's token;
 * with `gateway-wait`, the answer is held until the end or the wait runs out.
 */
async function readOrchestration(call: AppCall): Promise<OrchestrationState> {
  const id = orchestrationId(call);
  const { services } = call;
  const waitSeconds = waitSecondsOf(call.query, longestWaitSeconds(services.config));
  if (typeof waitSeconds === 'object') throw invalidRequest(ProblemList.of([waitSeconds]));
  const authorization = call.request.headers.get('authorization') ?? undefined;
  let state: OrchestrationState | undefined;
  if (waitSeconds) {
    const untilMs = call.startedMs + waitSeconds * 1000;
    const { signal } = call;
    // Counted before anything is read: a refused wait costs no storage request.
    const releaseWait = takeWaitSlot(services, call.caller, untilMs);
    try {
      const firstLook = await visibleStatus(viewerOf(call), id);
      state = await waitForEnd(services, id, { untilMs, authorization, signal, firstLook });
    } finally {
      releaseWait();
    }
    if (!state && signal?.aborted) throw new GatewayError('CallerGone', 'The caller hung up before the wait ended.');
  } else {
    const seen = await visibleOrchestration(viewerOf(call), id);
    const reader = callerReaderOf(services, authorization);
    // Read again only when the caller's read made a step: otherwise what was seen is current.
    state = reader && (await services.orchestrations.advance(id, reader)) ? await services.orchestrations.get(id) : seen;
  }
  if (!state) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
  return state;
}

export const getOrchestration = appHandler(appRoutes.orchestrationsGet, async (call) =>
  statusDocumentResponse(await readOrchestration(call), call.appBase, call.correlationId, call.services.now()),
);

export const getOperation = appHandler(appRoutes.operationsGet, async (call) =>
  operationAnswer(await readOrchestration(call), call.appBase, call.correlationId, call.services.now()),
);

/**
 * A page of orchestrations from blob metadata alone (no input or output unless `showInput`),
 * so the answer stays small whatever is stored; `x-ms-continuation-token` reads on. With
 * `showInput`, the page ends where its documents would pass ORCHESTRATION_LIST_INPUT_BYTES,
 * and only the documents whose inputs it returns are read.
 */
export const listOrchestrations = appHandler(appRoutes.orchestrationsList, async (call) => {
  const { filter, top, showInput, continuationToken } = listRequestOf(call.query, call.request.headers);
  const { services } = call;
  const page = await services.orchestrations.query({
    ...visibleFilter(services, call.caller, filter),
    top,
    continuationToken,
    ...scanBoundsOf(services.config),
    ...(showInput ? { maxDocumentBytes: services.config.ORCHESTRATION_LIST_INPUT_BYTES } : {}),
  });
  const value = [];
  for (const summary of page.summaries) {
    const { requestKey: _key, nextDeliveryAt: _delivery, target: _target, documentBytes: _bytes, ...entry } = summary;
    const listed: Record<string, unknown> = { ...entry, ...orchestrationLinks(call.appBase, summary.id) };
    if (showInput) listed.input = (await services.orchestrations.get(summary.id))?.input ?? null;
    value.push(listed);
  }
  return jsonResponse(200, { value }, call.correlationId, page.continuationToken ? { [continuationHeader]: page.continuationToken } : {});
});

export const terminateOrchestration = appHandler(appRoutes.orchestrationsTerminate, async (call) => {
  const id = orchestrationId(call);
  await visibleOrchestration(viewerOf(call), id);
  const reason = call.request.query.get('reason') ?? 'Terminated by a caller.';
  const state = await call.services.orchestrations.terminate(id, reason);
  return jsonResponse(202, statusDocument(state, call.appBase), call.correlationId);
});

/** Durable's purge of one instance: 200 `{ instancesDeleted: 1 }`, 404 if there is none, 409 while it runs. */
export const purgeOrchestration = appHandler(appRoutes.orchestrationsPurge, async (call) => {
  const id = orchestrationId(call);
  await visibleOrchestration(viewerOf(call), id);
  const outcome = await call.services.orchestrations.purge(id);
  if (outcome === 'missing') throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
  if (outcome === 'running')
    throw new GatewayError('OrchestrationRunning', `Orchestration ${id} is still running: terminate it before purging it.`, { target: 'id' });
  if (outcome === 'notifying')
    throw new GatewayError(
      'NotificationsPending',
      `Orchestration ${id} still has notifications of its end to deliver; purge it once they are delivered or given up.`,
      { target: 'id' },
    );
  return jsonResponse(200, { instancesDeleted: 1 }, call.correlationId);
});

/** Durable's purge by filter, bounded per request: `x-ms-continuation-token` goes on purging. */
export const purgeOrchestrations = appHandler(appRoutes.orchestrationsPurgeMany, async (call) => {
  const { filter, continuationToken } = purgeRequestOf(call.query, call.request.headers);
  const purged = await call.services.orchestrations.purgeMatching(visibleFilter(call.services, call.caller, filter), {
    top: call.services.config.ORCHESTRATION_PURGE_REQUEST_MAX,
    continuationToken,
    ...scanBoundsOf(call.services.config),
  });
  return jsonResponse(
    200,
    { instancesDeleted: purged.instancesDeleted },
    call.correlationId,
    purged.continuationToken ? { [continuationHeader]: purged.continuationToken } : {},
  );
});

/** Durable's restart: the stored request started again as a new orchestration, answered as a start is. */
export const restartOrchestrationRoute = appHandler(
  appRoutes.orchestrationsRestart,
  async (call) => (await restartOrchestration(call, viewerOf(call), orchestrationId(call))).response,
);

export const terminateOrchestrations = appHandler(appRoutes.orchestrationsTerminateMany, (call) => bulkAction('terminate', call, viewerOf(call)));

export const restartOrchestrations = appHandler(appRoutes.orchestrationsRestartMany, (call) => bulkAction('restart', call, viewerOf(call)));

export const countOrchestrations = appHandler(appRoutes.orchestrationsCounts, orchestrationCounts);
