/**
 * How a start that waits for approval changes, as pure functions of its document, what happened
 * and the time (as transitions.ts does for the rest). Such a start is Pending with
 * `customStatus.approval` and a `heldStart` (what its send needs), and no upstream call was made:
 *
 *   waiting ──approvals reach `required`──▶ approved ──send claimed──▶ sending ──answer──▶ Running / ended
 *      │                                       │
 *      ├─a rejection──▶ Failed NotApproved     └─not sent by `sendBy` (passthrough: no read)──▶ Failed DeadlineExceeded
 *      └─`expiresAt` passed──▶ Failed NotApproved
 *
 * Only a send claim (a conditional write) lets an instance send, so two approvals or two
 * instances never send twice; a send claimed but never recorded is the one ambiguous case, ended
 * as the stale-start rule ends any interrupted start.
 */
import { distinctApprovals, identitiesOf } from './approvalIdentities';
import type { ApprovalDecisionRecord, ApprovalStatus } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import type { HoldRules } from '../orchestration';
import type { Ending } from '../orchestration';

export const notApprovedCode = 'NotApproved';

/** How long a caller polling a waiting request is told to wait between reads, at most. */
const waitingRetryAfterMs = 10_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** The approval of a document, if it needed one. */
export function approvalOfState(state: OrchestrationState): ApprovalStatus | undefined {
  return state.customStatus?.approval;
}

/** An approval that has just begun waiting, keeping every name its starter called with (approvalIdentities.ts). */
export function waitingApproval(
  required: number,
  approvers: readonly string[],
  expiresAt: number,
  starter: { primary: string; selectors: readonly string[] },
): ApprovalStatus {
  return { state: 'waiting', required, approvers: [...approvers], expiresAt: iso(expiresAt), starter: identitiesOf(starter), decisions: [] };
}

/** The customStatus of a start waiting for (or approved and waiting to be sent): nothing is upstream yet. */
export function waitingStatus(approval: ApprovalStatus): NonNullable<OrchestrationState['customStatus']> {
  const given = approval.decisions.filter((decision) => decision.approved).length;
  const message =
    approval.state === 'waiting'
      ? `Waiting for approval (${given} of ${approval.required}) until ${approval.expiresAt}; nothing was sent upstream.`
      : "Approved: it is sent upstream by the next poller run (in passthrough mode, by its starter's next read).";
  return { upstreamState: 'NotStarted', message, approval };
}

/** Whether the start waits for approval decisions. */
export function isWaiting(state: OrchestrationState): boolean {
  return state.runtimeStatus === 'Pending' && approvalOfState(state)?.state === 'waiting';
}

/** Whether the start was approved and no instance has claimed its send yet. */
export function awaitsSend(state: OrchestrationState): boolean {
  return (
    state.runtimeStatus === 'Pending' &&
    approvalOfState(state)?.state === 'approved' &&
    state.heldStart !== undefined &&
    state.heldStart.sendingSince === undefined
  );
}

/**
 * The document with one more decision: rejected at the first rejection, approved once
 * `required` distinct callers approved (decisions sharing a name count once). Past `sendBy`, an approved start its starter never sent
 * (passthrough) ends; `sendBy` gives it as long again as it was given to wait.
 */
export function withDecision(state: OrchestrationState, decision: ApprovalDecisionRecord, now: number): OrchestrationState {
  const approval = approvalOfState(state);
  if (!approval || !state.heldStart) return state;
  const decisions = [...approval.decisions, decision];
  const approvals = distinctApprovals(decisions);
  const standing: ApprovalStatus['state'] = !decision.approved ? 'rejected' : approvals >= approval.required ? 'approved' : 'waiting';
  const next = { ...approval, state: standing, decisions };
  const heldStart =
    standing === 'approved' ? { ...state.heldStart, sendBy: now + (Date.parse(approval.expiresAt) - Date.parse(state.createdTime)) } : state.heldStart;
  return { ...state, heldStart, customStatus: waitingStatus(next), lastUpdatedTime: iso(now) };
}

/** The ending of a start that will not run: rejected (by whom, why), or expired. */
export function notApprovedEnding(state: OrchestrationState): Ending | undefined {
  const approval = approvalOfState(state);
  if (!approval) return undefined;
  if (approval.state === 'rejected') {
    const rejection = [...approval.decisions].reverse().find((decision) => !decision.approved)!;
    const message = `Rejected by ${rejection.by} at ${rejection.at}${rejection.reason ? `: ${rejection.reason}` : ''}; nothing was sent upstream.`;
    return { runtimeStatus: 'Failed', failure: { code: notApprovedCode, message }, customStatus: { upstreamState: 'NotStarted', message, approval } };
  }
  if (approval.state === 'waiting' || approval.state === 'expired') {
    const expired = { ...approval, state: 'expired' as const };
    const message = `No approval came before ${approval.expiresAt}: it expired, and nothing was sent upstream.`;
    return { runtimeStatus: 'Failed', failure: { code: notApprovedCode, message }, customStatus: { upstreamState: 'NotStarted', message, approval: expired } };
  }
  return undefined;
}

/** The approval that completed an approved start, when it came at or after the expiry (judged in time, written late, or on a skewed clock). */
function lateApprovalOf(approval: ApprovalStatus): ApprovalDecisionRecord | undefined {
  const last = [...approval.decisions].reverse().find((decision) => decision.approved);
  return approval.state === 'approved' && last && Date.parse(last.at) >= Date.parse(approval.expiresAt) ? last : undefined;
}

/**
 * What a step does with a Pending start that needed approval, at `now`: `end` it (expired,
 * approved only at or after its expiry, or approved but never sent by `sendBy`), `send` it, or
 * nothing yet (`wait`).
 */
export function approvalStepOf(state: OrchestrationState, now: number): { kind: 'end'; ending: Ending } | { kind: 'send' } | { kind: 'wait' } {
  const approval = approvalOfState(state);
  if (isWaiting(state) && approval && now >= Date.parse(approval.expiresAt)) return { kind: 'end', ending: notApprovedEnding(state)! };
  if (!awaitsSend(state)) return { kind: 'wait' };
  const late = lateApprovalOf(approval!);
  if (late) {
    const message = `The last approval needed came at ${late.at}, not before the request expired at ${approval!.expiresAt}: it expired, and nothing was sent upstream. Start it again.`;
    return {
      kind: 'end',
      ending: {
        runtimeStatus: 'Failed',
        failure: { code: notApprovedCode, message },
        customStatus: { upstreamState: 'NotStarted', message, approval: { ...approval!, state: 'expired' } },
      },
    };
  }
  if (now >= (state.heldStart?.sendBy ?? Infinity)) {
    const message = `Approved, but not sent by ${iso(state.heldStart!.sendBy!)}: in passthrough mode an approved start is sent on its starter's next read with its own token, and none came.`;
    return {
      kind: 'end',
      ending: {
        runtimeStatus: 'Failed',
        failure: { code: 'DeadlineExceeded', message },
        customStatus: { upstreamState: 'NotStarted', message, approval: approval! },
      },
    };
  }
  return { kind: 'send' };
}

/** When the index should next bring a waiting or approved start to the poller: its expiry, or at once and until `sendBy`. */
export function approvalScheduleOf(state: OrchestrationState): { startedAt: number; nextPollAt: number; deadlineAt: number } | undefined {
  const approval = approvalOfState(state);
  if (!approval || state.runtimeStatus !== 'Pending') return undefined;
  const startedAt = Date.parse(state.createdTime);
  if (approval.state === 'waiting') return { startedAt, nextPollAt: Date.parse(approval.expiresAt), deadlineAt: Date.parse(approval.expiresAt) };
  const sendBy = state.heldStart?.sendBy ?? Date.parse(approval.expiresAt);
  return { startedAt, nextPollAt: Date.parse(state.lastUpdatedTime), deadlineAt: sendBy };
}

/** The Retry-After a caller polling a start that waits for approval is told (ms from now). */
export function waitingRetryAfterOf(state: OrchestrationState, now: number): number | undefined {
  const approval = approvalOfState(state);
  if (state.runtimeStatus !== 'Pending' || !approval) return undefined;
  if (approval.state !== 'waiting') return 1000;
  return Math.max(1000, Math.min(waitingRetryAfterMs, Date.parse(approval.expiresAt) - now));
}

/**
 * The rules the engine holds starts by (its `holds`): a start waits for its approvals until its
 * expiry, is sent once approved, and gives its place among the waiting (`release`) back once
 * approved or ended.
 */
export function approvalHolds(places: { release(startedBy: string, id: string): Promise<void> }): HoldRules {
  return {
    stepOf: approvalStepOf,
    scheduleOf: approvalScheduleOf,
    isDue: awaitsSend,
    release: async (state) => (state.startedBy === undefined ? undefined : places.release(state.startedBy, state.id)),
  };
}
