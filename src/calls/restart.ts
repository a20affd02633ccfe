/**
 * `POST orchestrations/{id}/restart` (Durable Functions' name): the stored request of an ended
 * orchestration started again as a new one. A restart is a start: the request is replayed
 * through the operation's own pipeline (operationCall.ts), with the restarting caller's identity and (in
 * passthrough mode) its token, so the access policy as it stands now, scopes, the caller's rate
 * share, validation, duplicates and anything else a start goes through apply again, and it is
 * answered as a start is. The two are linked both ways: `restartedAs` on the original, written
 * before the start (restartLinks.ts: one restart of an original wins), and `restartedFrom` on
 * the new one, handed to the start as part of the call, never read from a request.
 */
import { randomUUID } from 'node:crypto';
import type { HttpResponseInit } from '@azure/functions';
import { GatewayError, toGatewayError } from '../errors';
import { errorResponse } from './answers';
import { isActive, type OrchestrationState } from '../orchestration';
import { linkRestart, unlinkRestart } from '../orchestration';
import { redactedMarker } from '../rules';
import type { Services } from '../services';
import { operations, pathParamsOf, resolvePathTemplate } from '../spec';
import { appParameterOf } from '../rules';
import { callRecordLine, type CallRecordDraft } from './callLog';
import { forwardedCallerHeaders, runOperation, type OperationCall } from './operationCall';
import { visibleOrchestration, type Viewer } from './orchestrationVisibility';
import type { RouteCall } from './routeCall';

/** Whether a stored body holds a value the store redacted: such a request cannot be sent as it was. */
function holdsRedacted(value: unknown): boolean {
  if (value === redactedMarker) return true;
  if (Array.isArray(value)) return value.some(holdsRedacted);
  return typeof value === 'object' && value !== null && Object.values(value).some(holdsRedacted);
}

/** What is replayed, or why it cannot be: checked before the original is linked. */
function replayPlanOf(original: OrchestrationState, services: Services) {
  const { id } = original;
  if (isActive(original)) {
    throw new GatewayError(
      'OrchestrationRunning',
      `Orchestration ${id} is still ${original.runtimeStatus}: only an ended one (Completed, Failed, Terminated) can be restarted. Wait for its end, or terminate it first.`,
      { target: 'id' },
    );
  }
  if (holdsRedacted(original.input.body)) {
    throw new GatewayError(
      'Conflict',
      `Orchestration ${id}'s request held secrets, which are never stored (they read "${redactedMarker}"), so it cannot be sent again as it was: send the request again yourself (${original.input.method} ${original.input.path}).`,
      { target: 'input.body' },
    );
  }
  const operation = operations.find((candidate) => candidate.operationId === original.name && candidate.longRunning);
  const params = operation && pathParamsOf(resolvePathTemplate(operation, services.config.PROVIDER_NAMESPACE), original.input.path);
  if (!operation || !params) {
    throw new GatewayError(
      'Conflict',
      `Orchestration ${id}'s request (${original.name} on ${original.input.path}) is not one this app serves any more: send the request again yourself.`,
      { target: 'id' },
    );
  }
  return { operation, params };
}

/**
 * The stored request as the restarting caller makes it: the caller's identity, token, forwarded
 * headers and `x-gateway-notify`; the stored method's path values, query and body; and the
 * restart's `gateway-wait` on a single restart (never on a bulk one's many).
 */
function replayCallOf(
  call: RouteCall,
  original: OrchestrationState,
  plan: ReturnType<typeof replayPlanOf>,
  link: OperationCall['restart'],
  single: boolean,
  record: CallRecordDraft,
): OperationCall {
  const query = new URLSearchParams(original.input.query);
  const wait = single ? appParameterOf(call.query, 'gateway-wait') : null;
  if (wait !== null) query.set('gateway-wait', wait);
  const { body } = original.input;
  const bytes = body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body));
  const header = (name: string) => call.headers.get(name) ?? undefined;
  return {
    operation: plan.operation,
    caller: call.caller,
    params: plan.params,
    query,
    ...(bytes ? { body: { contentType: 'application/json', read: async () => bytes } } : {}),
    authorization: header('authorization'),
    forwardedHeaders: Object.fromEntries(forwardedCallerHeaders.flatMap((name) => (header(name) ? [[name, header(name)!]] : []))),
    notify: header('x-gateway-notify'),
    correlationId: call.correlationId,
    startedMs: call.startedMs,
    appBaseFor: () => call.appBase,
    signal: call.signal,
    restart: link,
    record,
  };
}

/**
 * Restarts one orchestration the caller may see; answers as the start answers (or throws the
 * refusal). A start that made no new orchestration (refused, or a duplicate joining a running
 * one) leaves the original unlinked. The replayed operation leaves its own call record, as a
 * caller's call of it would.
 */
export async function restartOrchestration(
  call: RouteCall,
  viewer: Viewer,
  id: string,
  { single = true } = {},
): Promise<{ response: HttpResponseInit; restartedAs?: string }> {
  const { services } = call;
  const original = await visibleOrchestration(viewer, id);
  const plan = replayPlanOf(original, services);
  const store = services.orchestrations.store;
  const newId = randomUUID();
  await linkRestart(store, id, newId, services.now());
  const record: CallRecordDraft = { caller: call.caller };
  let started = false;
  let response: HttpResponseInit | undefined;
  try {
    const result = await runOperation(services, replayCallOf(call, original, plan, { id: newId, restartedFrom: id }, single, record));
    started = result.outcome?.state.id === newId;
    response = result.response;
    return { response, ...(started ? { restartedAs: newId } : {}) };
  } catch (thrown) {
    response = errorResponse(toGatewayError(thrown), call.correlationId);
    throw thrown;
  } finally {
    call.log(
      callRecordLine(record, { operation: plan.operation.operationId, target: '(invalid)', caller: call.caller }, response!, {
        durationMs: services.now() - call.startedMs,
        correlationId: call.correlationId,
      }),
    );
    if (!started && !(await store.readStatus(newId).catch(() => undefined))) await unlinkRestart(store, id, newId).catch(() => undefined);
  }
}
