/**
 * Starts held instead of sent: stored Pending with a `heldStart` (what their send needs) and
 * nothing sent upstream, until the rules that hold them (HoldRules; src/approvals gives the
 * app's) say to send or to end them. The engine's part is the same whatever holds a start: a
 * change recorded with a conditional write (retried on a conflict, each try judged on the
 * version it writes), and the send claimed first with a conditional write on the version read,
 * so whoever else tries (a second decision, the poller on another instance, the starter's read)
 * finds it claimed and sends nothing; what the upstream answers is recorded as a start's answer
 * is (startAnswers.ts).
 */
import { GatewayError } from '../errors';
import { refuseRedirect, type UpstreamResponse } from '../upstream';
import type { EngineDependencies, HeldChange, HoldRules, PollReader } from './engineSettings';
import type { OrchestrationRecords } from './orchestrationRecords';
import type { OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import type { StartRecorder } from './startAnswers';

/** The document as one instance claims the send of a held start (a conditional write makes it the only one). */
export function withSendClaim(state: OrchestrationState, now: number): OrchestrationState {
  return { ...state, heldStart: state.heldStart && { ...state.heldStart, sendingSince: now }, lastUpdatedTime: new Date(now).toISOString() };
}

export class HeldStarts {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'upstream' | 'now' | 'holds' | 'settings'>,
    private readonly records: OrchestrationRecords,
    private readonly recorder: StartRecorder,
  ) {}

  get #rules(): HoldRules {
    if (!this.deps.holds) throw new GatewayError('InternalError', 'Starts cannot be held here: the engine was built without hold rules.');
    return this.deps.holds;
  }

  /**
   * Changes a held start: `change` sees each version about to be written (and throws when the
   * change is refused on it, so a version changed meanwhile is judged again). An ending ends it
   * at once. A change that makes it due (an approval completing it) is durable in any order an
   * instance stops in: its key is made due first, marked with when the change began; then the
   * document is written; then the key is scheduled again (in case a poller run set it back while
   * the write was on its way) and what the start held is given back. A poller run that finds the
   * key due while the document still says held (the write not landed yet, or never) sets the key
   * back no later than the change's window (`changeWindowMs`) past its start, so a write that
   * lands meanwhile is found by a later run within that window, whoever stopped when.
   */
  async change(id: string, change: (state: OrchestrationState, now: number) => HeldChange): Promise<OrchestrationState> {
    const rules = this.#rules;
    const stored = await this.deps.store.read(id);
    if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
    const now = this.deps.now();
    const preview = change(stored.state, now);
    if ('ending' in preview) {
      return this.records.end(stored, (state) => {
        const decided = change(state, now);
        return 'ending' in decided ? decided.ending : undefined;
      });
    }
    const changed = (state: OrchestrationState) => {
      const decided = change(state, now);
      if ('ending' in decided) throw new GatewayError('Conflict', `Orchestration ${id} changed meanwhile; try again.`, { target: 'id' });
      return decided.state;
    };
    if (rules.isDue(preview.state)) await this.deps.index.scheduleKey(preview.state.requestKey, id, { ...rules.scheduleOf(preview.state)!, changedAt: now });
    const { state } = await this.records.write(stored, changed);
    if (rules.isDue(state)) await Promise.all([this.deps.index.scheduleKey(state.requestKey, id, rules.scheduleOf(state)!), rules.release(state)]);
    return state;
  }

  /**
   * One step of a held start: ended when its rules end it; sent, with a reader, when due; else,
   * once its send was claimed and never recorded, failed by the stale-start rule. Whether it
   * did something.
   */
  async step(stored: StoredState, reader: PollReader | undefined, keyEtag: string | undefined, keyChangedAt?: number): Promise<boolean> {
    const rules = this.#rules;
    const now = this.deps.now();
    const next = rules.stepOf(stored.state, now);
    // Ended by its rules: as the stale-start rule ends such a start, decided again on the version
    // written, so a change that came meanwhile stands.
    if (next.kind === 'end') return this.records.failStalePending(stored, now);
    if (next.kind === 'wait') {
      if (await this.records.failStalePending(stored, now)) return true;
      // The poller found it due while it is still held (a change on its way, or half written when
      // an instance stopped): its key is set back to its own schedule, but while the change may
      // still land, to no later than the change's window (see change). Only the poller (it holds
      // the key's ETag) does this, not every read of a caller; never once its send is claimed.
      const schedule = rules.scheduleOf(stored.state);
      if (keyEtag === undefined || stored.state.heldStart?.sendingSince !== undefined || !schedule) return false;
      const windowEndsAt = keyChangedAt === undefined ? undefined : keyChangedAt + this.deps.settings.changeWindowMs;
      const setBack =
        windowEndsAt !== undefined && windowEndsAt > now
          ? { ...schedule, nextPollAt: Math.min(schedule.nextPollAt ?? windowEndsAt, windowEndsAt), changedAt: keyChangedAt }
          : schedule;
      await this.deps.index.scheduleKey(stored.state.requestKey, stored.state.id, setBack, keyEtag);
      return true;
    }
    const { state } = stored;
    // Sent with the starter's own token in passthrough mode, never another caller's.
    if (!reader || (state.actor !== undefined && state.actor !== reader.actor)) return false;
    const claim = await this.records.replace({ state: withSendClaim(state, now), etag: stored.etag });
    if (!claim) return false;
    const held = claim.state.heldStart!;
    this.records.log({ id: state.id, name: state.name, step: 'held-send' });
    try {
      await this.recorder.sendAndRecord(
        claim,
        { name: state.name, method: state.input.method, resourceUrl: held.url },
        () => this.#send(state, held, reader.token),
        keyEtag,
      );
    } catch (error) {
      // Recorded as the start's failure already: the document tells whoever follows it.
      this.records.log({ id: state.id, step: 'held-send-failed', code: (error as GatewayError).code ?? 'InternalError' });
    }
    return true;
  }

  async #send(state: OrchestrationState, held: NonNullable<OrchestrationState['heldStart']>, token: string): Promise<UpstreamResponse> {
    // As a start sent at once (src/calls): the request as held, and never a redirect followed.
    return refuseRedirect(await this.deps.upstream.send({ method: state.input.method, url: held.url, headers: held.headers, body: held.bodyText, token }));
  }
}
