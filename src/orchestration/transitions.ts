/**
 * How an orchestration's document changes, as pure functions of the document, what happened
 * and the time (after core-lro, whose state machine knows nothing of transport). The engine
 * reads, applies one of these, and writes with the ETag it read; nothing here does I/O.
 *
 * The one rule every change keeps: an orchestration that ended (Completed, Failed,
 * Terminated) stays as it ended. A poll that reads the end after a terminate, or a second
 * instance settling what another settled, changes nothing.
 */
import type { KeySchedule } from './orchestrationIndex';
import { pollIntervalMs, type PollingMode, type PollIntervalPolicy, type PollReading } from './lroRules';
import { openOutbox } from './outbox';
import { isActive, type OrchestrationState, type RuntimeStatus } from './orchestrationState';

const iso = (ms: number) => new Date(ms).toISOString();

export type EndedStatus = Exclude<RuntimeStatus, 'Pending' | 'Running'>;

export interface Ending {
  runtimeStatus: EndedStatus;
  output?: OrchestrationState['output'];
  failure?: OrchestrationState['failure'];
  customStatus?: OrchestrationState['customStatus'];
  initial?: OrchestrationState['initial'];
}

/** Where an ending tells of itself: the targets the starter named, and `NOTIFY_URL`. */
export interface EndingContext {
  notifyUrl?: string;
  newId: () => string;
}

/**
 * A new customStatus that keeps the approval the start waited for (who decided, when, why): it
 * stays in the status document, and in the end notification, for as long as the document does.
 */
function keepingApproval(
  state: OrchestrationState,
  customStatus: NonNullable<OrchestrationState['customStatus']>,
): NonNullable<OrchestrationState['customStatus']> {
  const approval = state.customStatus?.approval;
  return approval ? { approval, ...customStatus } : customStatus;
}

/**
 * The document as it ends: its status and result, the time it ended, its poll released, and
 * its outbox opened. An orchestration that ended already is returned as it is.
 */
export function ended(state: OrchestrationState, ending: Ending, now: number, context: EndingContext): OrchestrationState {
  if (!isActive(state)) return state;
  const targets = [...(state.notifyTargets ?? []), ...(context.notifyUrl ? [context.notifyUrl] : [])];
  const { claimedUntil: _released, ...poll } = state.poll ?? ({} as NonNullable<OrchestrationState['poll']>);
  return {
    ...state,
    ...ending,
    ...(ending.customStatus ? { customStatus: keepingApproval(state, ending.customStatus) } : {}),
    ...(state.poll ? { poll } : {}),
    lastUpdatedTime: iso(now),
    endedTime: iso(now),
    deliveries: openOutbox(targets, context.newId, now),
  };
}

export interface FollowPlan {
  mode: PollingMode;
  url: string;
  resourceUrl: string;
  /** Where a POST's result is read (see resultUrlOf). */
  resultUrl?: string;
  /** The Retry-After of the first answer. */
  retryAfter?: string;
  deadlineMs: number;
}

/** A start the upstream accepted: running, first poll when the upstream asked. */
export function running(
  state: OrchestrationState,
  plan: FollowPlan,
  initial: NonNullable<OrchestrationState['initial']>,
  now: number,
  policy: PollIntervalPolicy,
): OrchestrationState {
  if (!isActive(state)) return { ...state, initial };
  const interval = pollIntervalMs(plan.retryAfter, policy);
  return {
    ...state,
    runtimeStatus: 'Running',
    initial,
    customStatus: keepingApproval(state, { upstreamState: 'InProgress', lastReadStatus: initial.status }),
    poll: {
      mode: plan.mode,
      url: plan.url,
      resourceUrl: plan.resourceUrl,
      ...(plan.resultUrl ? { resultUrl: plan.resultUrl } : {}),
      nextPollAt: now + interval,
      pollCount: 0,
      failedReads: 0,
      deadlineAt: now + plan.deadlineMs,
    },
    lastUpdatedTime: iso(now),
  };
}

/** A due poll held by one instance until `now + claimMs` (a claim that lapses if it dies). */
export function claimed(state: OrchestrationState, now: number, claimMs: number): OrchestrationState {
  return { ...state, poll: state.poll && { ...state.poll, claimedUntil: now + claimMs }, lastUpdatedTime: iso(now) };
}

/**
 * After a read that did not end the operation: running (wait as asked, and follow a new URL the
 * answer named), a failed read (wait as asked, or back off: 2, 4, 8 … times the floor), or, in
 * passthrough mode (an actor), a read the upstream refused with the reader's own token
 * (401/403: the claim is released and nothing else moves, so a reader with a bad token cannot
 * push the owner's polls back). Without an actor the app's own token is the only reader: a
 * refusal is then a failed read like any other, or every poller run would read again at once,
 * spending the principal's read budget on answers it cannot use.
 */
export type ReadOutcome = Extract<PollReading, { kind: 'running' | 'read-failed' }> & {
  retryAfter?: string;
  movedTo?: string;
  answerStatus?: number;
  /**
   * The read was of a POST's result, its status having said Succeeded (see readsResultOf): the
   * poll reads `movedTo` as a Location status from now on, and a 202 there is the result not
   * ready yet, a running read.
   */
  readsResult?: boolean;
};

export function afterRead(state: OrchestrationState, reading: ReadOutcome, now: number, policy: PollIntervalPolicy): OrchestrationState {
  if (!isActive(state) || !state.poll) return state;
  const lastPolledTime = iso(now);
  const { claimedUntil: _released, ...poll } = state.poll;
  const read = reading.readsResult ? 'result' : 'status';
  if (state.actor !== undefined && reading.kind === 'read-failed' && (reading.status === 401 || reading.status === 403)) {
    return {
      ...state,
      poll,
      customStatus: keepingApproval(state, {
        upstreamState: state.customStatus?.upstreamState ?? 'InProgress',
        lastReadStatus: reading.status,
        lastPolledTime,
        message: `The ${read} read was refused (${reading.status}) for the reader's token; the next read with a valid one goes on.`,
      }),
      lastUpdatedTime: lastPolledTime,
    };
  }
  const failedRead = reading.kind === 'read-failed';
  const failedReads = failedRead ? poll.failedReads + 1 : 0;
  const backoff = failedRead ? Math.min(policy.ceilingMs, policy.floorMs * 2 ** failedReads) : 0;
  const wait = Math.max(pollIntervalMs(reading.retryAfter, policy), backoff);
  // Once the status said Succeeded, the operation's state is that, whatever the result's reads answer.
  const upstreamState = reading.readsResult ? 'Succeeded' : reading.kind === 'running' ? reading.state : (state.customStatus?.upstreamState ?? 'InProgress');
  const message =
    reading.kind === 'read-failed'
      ? `The ${read} read failed (${reading.status || 'no answer'}); retrying.`
      : reading.readsResult
        ? `The operation succeeded upstream; its result is not ready yet (${reading.answerStatus ?? 202}); reading it again.`
        : undefined;
  return {
    ...state,
    customStatus: keepingApproval(state, {
      upstreamState,
      lastReadStatus: reading.kind === 'read-failed' ? reading.status : reading.answerStatus,
      lastPolledTime,
      ...(message ? { message } : {}),
    }),
    poll: {
      ...poll,
      ...(reading.readsResult ? { mode: 'location' as const } : {}),
      url: reading.movedTo ?? poll.url,
      nextPollAt: now + wait,
      pollCount: poll.pollCount + 1,
      failedReads,
    },
    lastUpdatedTime: lastPolledTime,
  };
}

/** When an active orchestration next needs the poller, as its request key records it. */
export function scheduleOf(state: OrchestrationState): KeySchedule {
  return { startedAt: Date.parse(state.createdTime), nextPollAt: state.poll?.nextPollAt, deadlineAt: state.poll?.deadlineAt };
}
