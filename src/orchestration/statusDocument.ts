/**
 * What callers and notification receivers are shown of an orchestration: the status document
 * in the spirit of Durable Functions' (`runtimeStatus`, `input`, `output`, `customStatus`,
 * times) with the links to follow it. A pure view of the stored state.
 */
import { deliveryView } from './outbox';
import { isActive, type OrchestrationState } from './orchestrationState';

export function orchestrationLinks(appBase: string, id: string) {
  return {
    statusQueryGetUri: `${appBase}/orchestrations/${id}`,
    terminatePostUri: `${appBase}/orchestrations/${id}/terminate`,
    operationGetUri: `${appBase}/operations/${id}`,
  };
}

export function statusDocument(state: OrchestrationState, appBase: string) {
  return {
    id: state.id,
    name: state.name,
    runtimeStatus: state.runtimeStatus,
    input: state.input,
    output: state.output ?? null,
    customStatus: state.customStatus ?? null,
    failure: state.failure ?? null,
    startedBy: state.startedBy ?? null,
    upstreamRequestIds: state.initial?.upstreamIds ?? null,
    createdTime: state.createdTime,
    lastUpdatedTime: state.lastUpdatedTime,
    endedTime: state.endedTime ?? null,
    nextPollTime: state.poll && isActive(state) ? new Date(state.poll.nextPollAt).toISOString() : null,
    pollCount: state.poll?.pollCount ?? 0,
    deadlineTime: state.poll ? new Date(state.poll.deadlineAt).toISOString() : null,
    notifications: (state.deliveries ?? []).map(deliveryView),
    ...(state.restartedFrom ? { restartedFrom: state.restartedFrom } : {}),
    ...(state.restartedAs ? { restartedAs: state.restartedAs } : {}),
    ...orchestrationLinks(appBase, state.id),
  };
}

/**
 * The `data` of the notification of an orchestration's end: the status document as it was when
 * it ended, without the input (it may be large, and it is the caller's own) and without the
 * outbox (which changes as deliveries are made), so every attempt sends the same event.
 */
export function endEventData(state: OrchestrationState, appBase: string) {
  const { input: _input, notifications: _notifications, ...document } = statusDocument(state, appBase);
  return { ...document, lastUpdatedTime: state.endedTime ?? state.lastUpdatedTime };
}
