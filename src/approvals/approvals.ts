/**
 * The starts that wait for approval, on the engine's held starts (src/orchestration/heldStarts.ts)
 * under the approval rules (approvalTransitions.ts: approvalHolds): holding one within the bounds
 * on waiting starts (a place each, approvalWaits.ts), recording a decision on one, and listing
 * those that wait.
 */
import { GatewayError } from '../errors';
import type { HeldOutcome, OrchestrationEngine, StartOutcome, StartRequest } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import type { ApprovalDecisionRecord, ApprovalStatus } from '../orchestration';
import { notApprovedEnding, waitingStatus, withDecision } from './approvalTransitions';
import type { ApprovalWaits, WaitingMarker } from './approvalWaits';

export class Approvals {
  constructor(
    private readonly engine: OrchestrationEngine,
    private readonly waits: ApprovalWaits,
    private readonly now: () => number,
  ) {}

  /**
   * Stores a start that waits for approval instead of sending it, within the bounds on waiting
   * starts: past the starter's or the app's, 429 with Retry-After and nothing stored. A repeat of
   * one waiting joins it (a duplicate), even at the bound.
   */
  async hold(
    request: StartRequest,
    held: NonNullable<OrchestrationState['heldStart']>,
    approval: ApprovalStatus,
    bounds: { perCaller: number; total: number },
  ): Promise<StartOutcome | HeldOutcome> {
    const { startedBy } = request;
    if (!startedBy) throw new GatewayError('InternalError', 'A start waits for approval only with a starter.');
    const id = request.id ?? this.engine.newId();
    await this.engine.store.ensureReady();
    const admitted = await this.waits.admit(
      { id, name: request.name, startedBy, expiresAt: Date.parse(approval.expiresAt), approvers: approval.approvers },
      bounds,
      this.now(),
    );
    if (!admitted.admitted) {
      // A repeat of a start that already waits (an SDK retrying its PUT) takes no new place: it joins it.
      const repeated = await this.engine.activeRepeatOf(request);
      if (repeated) return { kind: 'duplicate', state: repeated };
      const which =
        admitted.bound === 'caller'
          ? `the caller (${startedBy}) has ${bounds.perCaller} starts waiting for approval (APPROVAL_MAX_PENDING_PER_CALLER)`
          : `${bounds.total} starts wait for approval (APPROVAL_MAX_PENDING)`;
      throw new GatewayError('TooManyPendingApprovals', `Not stored: ${which}. Try again once one is decided or expires, or ask an approver to decide them.`, {
        headers: { 'retry-after': String(admitted.retryAfterSeconds) },
      });
    }
    try {
      const logged = { step: 'waiting-for-approval', required: approval.required, expiresAt: approval.expiresAt };
      const outcome = await this.engine.hold({ ...request, id }, held, waitingStatus(approval), logged);
      if (outcome.kind !== 'waiting') await this.waits.release(startedBy, id);
      return outcome;
    } catch (error) {
      await this.waits.release(startedBy, id).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Records one decision on a start waiting for approval. `judge` sees each version about to be
   * changed and throws when the caller may not decide it (so a version another decision changed
   * meanwhile is judged again). A rejection ends it at once; an approval that completes it makes
   * its send due (the engine schedules it and gives its place back).
   */
  decide(id: string, decision: Omit<ApprovalDecisionRecord, 'at'>, judge: (state: OrchestrationState) => void): Promise<OrchestrationState> {
    return this.engine.changeHeld(id, (state, now) => {
      judge(state);
      const decided = withDecision(state, { ...decision, at: new Date(now).toISOString() }, now);
      // The decision and the end in one write: a rejected start never waits again.
      const ending = decision.approved ? undefined : notApprovedEnding(decided);
      return ending ? { ending } : { state: decided };
    });
  }

  /** The starts waiting for approval, from their markers alone (see ApprovalWaits.waiting). */
  waiting(limit: number): Promise<WaitingMarker[]> {
    return this.waits.waiting(this.now(), limit);
  }
}
