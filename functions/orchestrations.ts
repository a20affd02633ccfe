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
import { operationAnswer, orchestrationLinks, statusDocument, statusDocumentResponse } from '../src/http/orchestrationAnswers';
import { rawQueryOf } from '../src/http/requestQuery';
import { invalidRequest, ProblemList } from '../src/http/validationDetails';
import { jsonResponse } from '../src/http/responses';
import type { RuntimeStatus } from '../src/orchestration/orchestrationState';
import type { SummaryQuery } from '../src/orchestration/orchestrationStore';
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
  if (call.services.tokens.mode === 'passthrough' && token) await call.services.orchestrations.advance(id, { token, actor: actorOf(token) });
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

/** Most entries one list answer holds, and most stored documents read to find them. */
const listBounds = { defaultTop: 100, maxTop: 1000, maxScanned: 5000 };
const continuationHeader = 'x-ms-continuation-token';

function listQueryOf(call: AppCall): SummaryQuery {
  const problems = new ProblemList();
  const query = rawQueryOf(call.request);
  const filter = query.get('runtimeStatus');
  const statuses = filter?.split(',').map((status) => status.trim()).filter(Boolean);
  for (const status of statuses ?? []) {
    if (!runtimeStatuses.some((known) => known.toLowerCase() === status.toLowerCase())) {
      problems.add({ code: 'InvalidParameter', target: 'runtimeStatus', message: `Unknown runtimeStatus "${status}"; it takes a comma-separated list of ${runtimeStatuses.join(', ')}.` });
    }
  }
  const topText = query.get('top');
  const top = topText === null ? listBounds.defaultTop : /^[1-9][0-9]{0,4}$/.test(topText) ? Number(topText) : NaN;
  if (!(top <= listBounds.maxTop)) problems.add({ code: 'InvalidParameter', target: 'top', message: `top must be a whole number from 1 to ${listBounds.maxTop}.` });
  const continuationToken = call.request.headers.get(continuationHeader) ?? undefined;
  if (continuationToken !== undefined && !/^[\x21-\x7e]{1,1024}$/.test(continuationToken)) {
    problems.add({ code: 'InvalidParameter', target: continuationHeader, message: `${continuationHeader} must be the token a previous answer gave.` });
  }
  if (problems.total > 0) throw invalidRequest(problems);
  return {
    statuses: statuses?.map((status) => runtimeStatuses.find((known) => known.toLowerCase() === status.toLowerCase())!),
    top,
    maxScanned: listBounds.maxScanned,
    continuationToken,
  };
}

/**
 * A page of orchestrations, from blob metadata alone: entries carry no input or output, so the
 * answer stays small whatever is stored, and `x-ms-continuation-token` reads on.
 */
export const listOrchestrations = appHandler(appRoutes.orchestrationsList.route, async (call) => {
  const page = await call.services.orchestrations.query(listQueryOf(call));
  const value = page.summaries.map(({ nextPollAt: _nextPollAt, deadlineAt: _deadlineAt, ...summary }) => ({ ...summary, ...orchestrationLinks(call.appBase, summary.id) }));
  return jsonResponse(200, { value }, call.correlationId, page.continuationToken ? { [continuationHeader]: page.continuationToken } : {});
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
    // Passthrough mode holds no token: orchestrations advance when their callers read them, and
    // the sweep still applies deadlines, interrupted starts and retention, which need none.
    const token = services.tokens.mode === 'passthrough' ? undefined : await services.tokens.getToken({ upstream: 'management' });
    // Polls due within the lookahead are made in this run (see sweep). Waiting is billed
    // execution time, so it is a setting, and a margin keeps the run shorter than the period.
    const untilNextRunMs = new Cron(services.config.ORCHESTRATION_POLL_SCHEDULE, { paused: true }).msToNext() ?? 0;
    const lookaheadMs = Math.max(0, Math.min(untilNextRunMs - 300, services.config.LRO_POLL_LOOKAHEAD_SECONDS * 1000));
    const result = await services.orchestrations.sweep(token, lookaheadMs);
    if (result.due > 0 || result.purged > 0) context.log(JSON.stringify({ event: 'sweep', ...result }));
  },
});
