/**
 * The engine's side of the starts that wait for approval (approvalTransitions.ts says how they
 * change): a decision recorded with a conditional write (retried on a conflict, each try judged
 * on the version it writes), and the step that ends one that expired or sends one approved. The
 * send is claimed first with a conditional write on the version read, so whoever else tries (a
 * second approval, the poller on another instance, the starter's read) finds it claimed and sends
 * nothing; what the upstream answers is recorded as a start's answer is (startAnswers.ts).
 */
import { GatewayError } from '../errors';
import type { UpstreamResponse } from '../upstream/upstreamClient';
import type { ApprovalDecisionRecord } from './approvalStatus';
import { approvalScheduleOf, approvalStepOf, awaitsSend, isWaiting, notApprovedEnding, withDecision, withSendClaim } from './approvalTransitions';
import type { EngineDependencies, PollReader } from './engineSettings';
import type { OrchestrationRecords } from './orchestrationRecords';
import type { OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import type { StartRecorder } from './startAnswers';

export class HeldStarts {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'upstream' | 'now' | 'approvalWaits'>,
    private readonly records: OrchestrationRecords,
    private readonly recorder: StartRecorder,
  ) {}

  /**
   * Records one decision on a start waiting for approval. `judge` sees each version about to be
   * changed and throws when the caller may not decide it (so a version another decision changed
   * meanwhile is judged again). A rejection ends it at once; an approval that completes it gives
   * its waiting place back and schedules its send for the next step.
   */
  async decide(id: string, decision: Omit<ApprovalDecisionRecord, 'at'>, judge: (state: OrchestrationState) => void): Promise<OrchestrationState> {
    const stored = await this.deps.store.read(id);
    if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
    judge(stored.state);
    const now = this.deps.now();
    const made = { ...decision, at: new Date(now).toISOString() };
    const decided = (state: OrchestrationState) => {
      judge(state);
      return withDecision(state, made, now);
    };
    // The decision and the end in one write: a rejected start never waits again.
    if (!decision.approved) return this.records.end(stored, (state) => notApprovedEnding(decided(state)));
    // An approval that completes it: the key is scheduled at once, beside the write, so an
    // instance that stops between the two still leaves the send due for the next poller run (a
    // key due early for a start still waiting is set back by that run); and again after it, in
    // case that run set it back while the write was on its way.
    const preview = withDecision(stored.state, made, now);
    const early = awaitsSend(preview) ? this.deps.index.scheduleKey(preview.requestKey, id, approvalScheduleOf(preview)!) : undefined;
    const [write] = await Promise.allSettled([this.records.write(stored, decided), early]);
    if (write.status === 'rejected') throw write.reason;
    const { state } = write.value;
    if (awaitsSend(state)) {
      await Promise.all([
        this.deps.index.scheduleKey(state.requestKey, id, approvalScheduleOf(state)!),
        state.startedBy === undefined ? undefined : this.deps.approvalWaits?.release(state.startedBy, id),
      ]);
    }
    return state;
  }

  /**
   * One step of a Pending start that needed approval: ended when it expired (or was approved
   * and never sent in time); sent, with a reader, when approved; else, once its send was
   * claimed and never recorded, failed by the stale-start rule. Whether it did something.
   */
  async step(stored: StoredState, reader: PollReader | undefined, keyEtag: string | undefined): Promise<boolean> {
    const now = this.deps.now();
    const next = approvalStepOf(stored.state, now);
    // Expired (or approved and never sent in time): ended as the stale-start rule ends such a
    // start, decided again on the version written, so an approval that came meanwhile stands.
    if (next.kind === 'end') return this.records.failStalePending(stored, now);
    if (next.kind === 'wait') {
      if (await this.records.failStalePending(stored, now)) return true;
      // The poller found it due while it still waits (a decision half written when an instance
      // stopped): its key is set back to its expiry. Only the poller (it holds the key's ETag)
      // does this, not every read of a caller.
      const schedule = approvalScheduleOf(stored.state);
      if (keyEtag === undefined || !isWaiting(stored.state) || !schedule) return false;
      await this.deps.index.scheduleKey(stored.state.requestKey, stored.state.id, schedule, keyEtag);
      return true;
    }
    const { state } = stored;
    // Sent with the starter's own token in passthrough mode, never another caller's.
    if (!reader || (state.actor !== undefined && state.actor !== reader.actor)) return false;
    const claim = await this.records.replace({ state: withSendClaim(state, now), etag: stored.etag });
    if (!claim) return false;
    const held = claim.state.heldStart!;
    this.records.log({ id: state.id, name: state.name, step: 'approved-send' });
    try {
      await this.recorder.sendAndRecord(
        claim,
        { name: state.name, method: state.input.method, resourceUrl: held.url },
        () => this.#send(state, held, reader.token),
        keyEtag,
      );
    } catch (error) {
      // Recorded as the start's failure already: the document tells whoever follows it.
      this.records.log({ id: state.id, step: 'approved-send-failed', code: (error as GatewayError).code ?? 'InternalError' });
    }
    return true;
  }

  async #send(state: OrchestrationState, held: NonNullable<OrchestrationState['heldStart']>, token: string): Promise<UpstreamResponse> {
    const response = await this.deps.upstream.send({ method: state.input.method, url: held.url, headers: held.headers, body: held.bodyText, token });
    // As a start sent at once: no documented operation redirects, and a redirect is never followed.
    if (response.status >= 300 && response.status < 400) {
      throw new GatewayError('UpstreamBadResponse', `The upstream answered ${response.status}, a redirect; the app neither follows nor passes on redirects.`);
    }
    return response;
  }
}
