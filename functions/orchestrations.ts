/**
 * The orchestration routes and the poller timer, with Durable
 * Functions' names: status (`gateway-wait` holds it until the end), list, terminate, purge, and
 * the upstream-style `operations/{id}`. Registration and glue only: the engine is in
 * src/orchestration.
 */
import { app } from '@azure/functions';
import { Cron } from 'croner';
import { appRoutes, registrationOf } from '../src/appRoutes';
import { getConfig } from '../src/config';
import { GatewayError } from '../src/errors';
import { appHandler, type AppCall } from '../src/http/appHandler';
import { operationAnswer, statusDocumentResponse } from '../src/http/orchestrationAnswers';
import { continuationHeader, listRequestOf, purgeRequestOf, waitSecondsOf } from '../src/http/orchestrationQueries';
import { maySee } from '../src/http/authorization';
import { callerGoneSignalOf, takeWaitSlot, waitForEnd } from '../src/http/gatewayWait';
import { callerReaderOf } from '../src/http/pollReader';
import { rawQueryOf } from '../src/http/requestQuery';
import { jsonResponse } from '../src/http/responses';
import { invalidRequest, ProblemList } from '../src/http/validationDetails';
import type { OrchestrationState } from '../src/orchestration/orchestrationState';
import type { SummaryFilter } from '../src/orchestration/orchestrationStore';
import { orchestrationLinks, statusDocument } from '../src/orchestration/statusDocument';
import { getServices } from '../src/services';

const idPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How much of the store one list or purge request may read, and for how long. */
const scanBounds = { maxScanned: 10_000, timeBudgetMs: 5000 };
/** Most bytes of inputs one list answer carries with showInput=true; later entries say they left theirs out. */
const maxListedInputBytes = 4 * 1024 * 1024;

function orchestrationId(call: AppCall): string {
  const id = call.request.params.id ?? '';
  if (!idPattern.test(id)) throw new GatewayError('NotFound', 'No orchestration has that id.', { target: 'id' });
  return id;
}

/**
 * The orchestration if the caller may see it: its own, or any with `admin` (ACCESS_POLICY).
 * Another caller's answers 404, as one that does not exist, so ids reveal nothing.
 */
async function visibleOrchestration(call: AppCall, id: string): Promise<OrchestrationState> {
  const state = await call.services.orchestrations.get(id);
  if (!state || !maySee(call.services, call.caller, state.startedBy)) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
  return state;
}

/**
 * The same check from the blob's metadata (a HEAD), for a waiter: who started it is kept there,
 * so a wait never downloads the input (which may be megabytes) to be let in.
 */
async function visibleStatus(call: AppCall, id: string): Promise<void> {
  const status = await call.services.orchestrations.store.readStatus(id);
  if (!status || !maySee(call.services, call.caller, status.startedBy)) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
}

/** A list or purge filter held to the caller's own orchestrations unless it has `admin`. */
function ownFilter(call: AppCall, filter: SummaryFilter): SummaryFilter {
  return call.services.access.policy.isAdmin(call.caller) ? filter : { ...filter, startedBy: call.caller.primary };
}

/**
 * The orchestration, read after the caller's request drove it where it may: in passthrough
 * mode the timer holds no token, so the caller's read makes a due poll with the caller's token;
 * with `gateway-wait`, the answer is held until the end or the wait runs out.
 */
async function readOrchestration(call: AppCall): Promise<OrchestrationState> {
  const id = orchestrationId(call);
  const { services } = call;
  const waitSeconds = waitSecondsOf(rawQueryOf(call.request), services.config.GATEWAY_WAIT_MAX_SECONDS);
  if (typeof waitSeconds === 'object') throw invalidRequest(ProblemList.of([waitSeconds]));
  const authorization = call.request.headers.get('authorization') ?? undefined;
  let state: OrchestrationState | undefined;
  if (waitSeconds) {
    const untilMs = call.startedMs + waitSeconds * 1000;
    const signal = callerGoneSignalOf(call.request);
    // Counted before anything is read: a refused wait costs no storage request.
    const releaseWait = takeWaitSlot(services, call.caller, untilMs);
    try {
      await visibleStatus(call, id);
      state = await waitForEnd(services, id, { untilMs, authorization, signal });
    } finally {
      releaseWait();
    }
    if (!state && signal?.aborted) throw new GatewayError('CallerGone', 'The caller hung up before the wait ended.');
  } else {
    await visibleOrchestration(call, id);
    const reader = callerReaderOf(services, authorization);
    if (reader) await services.orchestrations.advance(id, reader);
    state = await services.orchestrations.get(id);
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
 * so the answer stays small whatever is stored; `x-ms-continuation-token` reads on.
 */
export const listOrchestrations = appHandler(appRoutes.orchestrationsList, async (call) => {
  const { filter, top, showInput, continuationToken } = listRequestOf(rawQueryOf(call.request), call.request.headers);
  const page = await call.services.orchestrations.query({ ...ownFilter(call, filter), top, continuationToken, ...scanBounds });
  let inputBytes = 0;
  const value = [];
  for (const summary of page.summaries) {
    const { requestKey: _key, nextDeliveryAt: _delivery, ...entry } = summary;
    const listed: Record<string, unknown> = { ...entry, ...orchestrationLinks(call.appBase, summary.id) };
    if (showInput) {
      const input = (await call.services.orchestrations.get(summary.id))?.input;
      const bytes = Buffer.byteLength(JSON.stringify(input ?? null));
      if (inputBytes + bytes <= maxListedInputBytes) {
        listed.input = input ?? null;
        inputBytes += bytes;
      } else {
        listed.inputOmitted = true;
      }
    }
    value.push(listed);
  }
  return jsonResponse(200, { value }, call.correlationId, page.continuationToken ? { [continuationHeader]: page.continuationToken } : {});
});

export const terminateOrchestration = appHandler(appRoutes.orchestrationsTerminate, async (call) => {
  const id = orchestrationId(call);
  await visibleOrchestration(call, id);
  const reason = call.request.query.get('reason') ?? 'Terminated by a caller.';
  const state = await call.services.orchestrations.terminate(id, reason);
  return jsonResponse(202, statusDocument(state, call.appBase), call.correlationId);
});

/** Durable's purge of one instance: 200 `{ instancesDeleted: 1 }`, 404 if there is none, 409 while it runs. */
export const purgeOrchestration = appHandler(appRoutes.orchestrationsPurge, async (call) => {
  const id = orchestrationId(call);
  await visibleOrchestration(call, id);
  const outcome = await call.services.orchestrations.purge(id);
  if (outcome === 'missing') throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
  if (outcome === 'running') throw new GatewayError('OrchestrationRunning', `Orchestration ${id} is still running: terminate it before purging it.`, { target: 'id' });
  if (outcome === 'notifying') throw new GatewayError('NotificationsPending', `Orchestration ${id} still has notifications of its end to deliver; purge it once they are delivered or given up.`, { target: 'id' });
  return jsonResponse(200, { instancesDeleted: 1 }, call.correlationId);
});

/** Durable's purge by filter, bounded per request: `x-ms-continuation-token` goes on purging. */
export const purgeOrchestrations = appHandler(appRoutes.orchestrationsPurgeMany, async (call) => {
  const { filter, continuationToken } = purgeRequestOf(rawQueryOf(call.request), call.request.headers);
  const purged = await call.services.orchestrations.purgeMatching(ownFilter(call, filter), { top: call.services.config.ORCHESTRATION_PURGE_BATCH, continuationToken, ...scanBounds });
  return jsonResponse(200, { instancesDeleted: purged.instancesDeleted }, call.correlationId, purged.continuationToken ? { [continuationHeader]: purged.continuationToken } : {});
});

for (const route of [
  [appRoutes.orchestrationsGet, getOrchestration],
  [appRoutes.orchestrationsList, listOrchestrations],
  [appRoutes.orchestrationsTerminate, terminateOrchestration],
  [appRoutes.orchestrationsPurge, purgeOrchestration],
  [appRoutes.orchestrationsPurgeMany, purgeOrchestrations],
  [appRoutes.operationsGet, getOperation],
] as const) {
  app.http(route[0].name, { ...registrationOf(route[0]), handler: route[1] });
}

app.timer('orchestrationPoller', {
  schedule: getConfig().ORCHESTRATION_POLL_SCHEDULE,
  handler: async (_timer, context) => {
    const services = getServices();
    // Passthrough mode holds no token: orchestrations advance when their callers read them, and
    // the sweep still applies deadlines, interrupted starts, notifications and retention.
    const token = services.tokens.mode === 'passthrough' ? undefined : await services.tokens.getToken({ upstream: 'management' });
    // Polls due within the lookahead are made in this run (see sweep). Waiting is billed
    // execution time, so it is a setting, and a margin keeps the run shorter than the period.
    const untilNextRunMs = new Cron(services.config.ORCHESTRATION_POLL_SCHEDULE, { paused: true }).msToNext() ?? 0;
    const lookaheadMs = Math.max(0, Math.min(untilNextRunMs - 300, services.config.LRO_POLL_LOOKAHEAD_SECONDS * 1000));
    const result = await services.orchestrations.sweep(token, lookaheadMs);
    context.log(JSON.stringify({ event: 'sweep', ...result }));
  },
});
