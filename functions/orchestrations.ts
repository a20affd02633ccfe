/**
 * The orchestration routes and the poller timer (DESIGN.md sections 1 and 4). Registration
 * and glue only: the engine is in src/orchestration.
 */
import { app } from '@azure/functions';
import { Cron } from 'croner';
import { appRoutes, registrationOf } from '../src/appRoutes';
import { getConfig } from '../src/config';
import { GatewayError } from '../src/errors';
import { appHandler, type AppCall } from '../src/http/appHandler';
import { operationAnswer, statusDocument, statusDocumentResponse } from '../src/http/orchestrationAnswers';
import { jsonResponse } from '../src/http/responses';
import type { RuntimeStatus } from '../src/orchestration/orchestrationState';
import { getServices } from '../src/services';
import { actorOf, bearerTokenOf } from '../src/upstream/tokenSource';

const runtimeStatuses: readonly RuntimeStatus[] = ['Pending', 'Running', 'Completed', 'Failed', 'Terminated'];
const idPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function orchestrationId(call: AppCall): string {
  const id = call.request.params.id ?? '';
  if (!idPattern.test(id)) throw new GatewayError('NotFound', 'No orchestration has that id.', { target: 'id' });
  return id;
}

/**
 * In passthrough mode the timer holds no token, so a caller's read advances its own
 * orchestration with the caller's token when a poll is due.
 */
async function advanceWithCallersToken(call: AppCall, id: string): Promise<void> {
  const token = bearerTokenOf(call.request.headers.get('authorization') ?? undefined);
  if (call.services.tokens.mode === 'passthrough' && token) await call.services.orchestrations.advance(id, token, actorOf(token));
}

async function readOrchestration(call: AppCall) {
  const id = orchestrationId(call);
  await advanceWithCallersToken(call, id);
  const state = await call.services.orchestrations.get(id);
  if (!state) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
  return state;
}

export const getOrchestration = appHandler(appRoutes.orchestrationsGet.route, async (call) =>
  statusDocumentResponse(await readOrchestration(call), call.appBase, call.correlationId, call.services.now()),
);

export const listOrchestrations = appHandler(appRoutes.orchestrationsList.route, async (call) => {
  const filter = call.request.query.get('runtimeStatus');
  const statuses = filter?.split(',').map((status) => status.trim()).filter(Boolean);
  const unknown = statuses?.filter((status) => !runtimeStatuses.some((known) => known.toLowerCase() === status.toLowerCase())) ?? [];
  if (unknown.length > 0) {
    throw new GatewayError('InvalidRequest', `runtimeStatus takes a comma-separated list of ${runtimeStatuses.join(', ')}.`, {
      details: unknown.map((status) => ({ code: 'InvalidParameter', target: 'runtimeStatus', message: `Unknown runtimeStatus "${status}".` })),
    });
  }
  const wanted = statuses?.map((status) => runtimeStatuses.find((known) => known.toLowerCase() === status.toLowerCase())!);
  const states = await call.services.orchestrations.list(wanted);
  states.sort((a, b) => b.createdTime.localeCompare(a.createdTime));
  return jsonResponse(200, { value: states.map((state) => statusDocument(state, call.appBase)) }, call.correlationId);
});

export const terminateOrchestration = appHandler(appRoutes.orchestrationsTerminate.route, async (call) => {
  const id = orchestrationId(call);
  const reason = call.request.query.get('reason') ?? 'Terminated by a caller.';
  const state = await call.services.orchestrations.terminate(id, reason);
  return jsonResponse(202, statusDocument(state, call.appBase), call.correlationId);
});

export const getOperation = appHandler(appRoutes.operationsGet.route, async (call) =>
  operationAnswer(await readOrchestration(call), call.appBase, call.correlationId, call.services.now()),
);

app.http(appRoutes.orchestrationsGet.name, { ...registrationOf(appRoutes.orchestrationsGet), handler: getOrchestration });
app.http(appRoutes.orchestrationsList.name, { ...registrationOf(appRoutes.orchestrationsList), handler: listOrchestrations });
app.http(appRoutes.orchestrationsTerminate.name, { ...registrationOf(appRoutes.orchestrationsTerminate), handler: terminateOrchestration });
app.http(appRoutes.operationsGet.name, { ...registrationOf(appRoutes.operationsGet), handler: getOperation });

app.timer('orchestrationPoller', {
  schedule: getConfig().ORCHESTRATION_POLL_SCHEDULE,
  handler: async (_timer, context) => {
    const services = getServices();
    if (services.tokens.mode === 'passthrough') {
      context.log('Orchestration poller: passthrough auth holds no token of its own; orchestrations advance when callers read them.');
      return;
    }
    const token = await services.tokens.getToken({ upstream: 'management' });
    // Polls due within the lookahead are made in this run (see sweep). Waiting is billed
    // execution time, so it is a setting, and a margin keeps the run shorter than the period.
    const untilNextRunMs = new Cron(services.config.ORCHESTRATION_POLL_SCHEDULE, { paused: true }).msToNext() ?? 0;
    const lookaheadMs = Math.max(0, Math.min(untilNextRunMs - 300, services.config.LRO_POLL_LOOKAHEAD_SECONDS * 1000));
    const result = await services.orchestrations.sweep(token, lookaheadMs);
    if (result.polled > 0 || result.purged > 0) context.log(JSON.stringify({ event: 'sweep', ...result }));
  },
});
