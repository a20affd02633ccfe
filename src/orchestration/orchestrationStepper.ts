/**
 * One step of one orchestration: a due poll claimed with a conditional write (so no two
 * instances make it), the upstream read once, and what was read recorded; or, with no upstream
 * call, a deadline or an interrupted start ended. Used by the poller's sweep and by callers
 * that drive their own orchestration (passthrough reads, `gateway-wait`).
 */
import { tracePoll } from '../telemetry';
import { GatewayError } from '../errors';
import { redactSecrets } from '../rules';
import { isTrustedUrl } from '../upstream';
import type { EngineDependencies, PollReader } from './engineSettings';
import { finalReadOf, movedPollUrlOf, readPoll, readsResultOf, type PollingMode, type PollReading, type UpstreamAnswer } from './lroRules';
import type { HeldStarts } from './heldStarts';
import type { OrchestrationRecords } from './orchestrationRecords';
import { isActive } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import { afterRead, claimed, scheduleOf, type ReadOutcome } from './transitions';
import { answerOf } from './upstreamAnswer';

/**
 * What bounds and helps one step: `budgetEndsAt` bounds a poll made for a waiting caller (its
 * reads get the time left, and none is begun with less than a second left, so a wait never
 * outlasts what it was given); `keyEtag`, the request key's version as the poller listed it,
 * lets the step reschedule or free the key without reading it first.
 */
export interface StepContext {
  budgetEndsAt?: number;
  keyEtag?: string;
  /** When a change of a held start that made its key due began, as the key says (see HeldStarts.change). */
  keyChangedAt?: number;
}

/** A read that did not end the operation, with the answer it read. */
type UnendedReading = Extract<PollReading, { kind: 'running' | 'read-failed' }> & { answer?: UpstreamAnswer };

export class OrchestrationStepper {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'upstream' | 'settings' | 'now'>,
    private readonly records: OrchestrationRecords,
    private readonly heldStarts: HeldStarts,
  ) {}

  /**
   * One step of one orchestration if one is due: a start that never got its answer, or a
   * deadline that passed, ends it (no upstream call, so no token is needed); otherwise, with a
   * reader, a due poll is claimed with a conditional write, the upstream read once, and what
   * was read recorded. Returns false when there was nothing to do here. Tried first on the
   * version this instance last wrote, as the sweep does (no read: the claim is conditioned on
   * it), then on the document read.
   */
  async advance(id: string, reader?: PollReader, budgetEndsAt?: number): Promise<boolean> {
    const cached = this.records.cache.get(id);
    if (cached && (await this.step(cached, reader, { budgetEndsAt }))) return true;
    const stored = await this.deps.store.read(id);
    if (!stored || !isActive(stored.state)) return false;
    return this.step(stored, reader, { budgetEndsAt });
  }

  /**
   * One step from `stored`, the version read (or the one this instance last wrote: a claim on
   * a version since replaced is refused, and the step returns false having made no call).
   */
  async step(stored: StoredState, reader: PollReader | undefined, context: StepContext = {}): Promise<boolean> {
    const { budgetEndsAt, keyEtag, keyChangedAt } = context;
    const now = this.deps.now();
    const { state } = stored;
    // A start that waited for approval is ended, sent or left waiting by its own rules (heldStarts.ts).
    if (state.runtimeStatus === 'Pending')
      return state.heldStart ? this.heldStarts.step(stored, reader, keyEtag, keyChangedAt) : this.records.failStalePending(stored, now);
    const poll = state.poll;
    if (!poll) return false;
    if (now >= poll.deadlineAt) {
      const minutes = Math.round((poll.deadlineAt - Date.parse(state.createdTime)) / 60_000);
      await this.records.end(
        stored,
        { runtimeStatus: 'Failed', failure: { code: 'DeadlineExceeded', message: `The operation did not end within its deadline of ${minutes} minutes.` } },
        keyEtag,
      );
      return true;
    }
    if (!reader || poll.nextPollAt > now || (poll.claimedUntil ?? 0) > now) return false;
    if (budgetEndsAt !== undefined && budgetEndsAt - now < 1000) return false;
    // Another caller's token is not used for this caller's operation (passthrough mode).
    if (state.actor !== undefined && state.actor !== reader.actor) return false;
    const { claimMs } = this.deps.settings;
    const claim = await this.records.replace({ state: claimed(state, now, claimMs), etag: stored.etag });
    if (!claim) return false;
    // The reads end before the claim does, a quarter of it left to record what they read: no
    // other instance can claim this due poll while they run, however long the upstream takes.
    const readsEndAt = Math.min(budgetEndsAt ?? Infinity, now + claimMs - claimMs / 4);
    // The poll's read and what it records are one span, linked to the start (src/telemetry).
    await tracePoll(state, now, async () =>
      this.#record(claim, await this.#readUpstream(poll.mode, poll.url, state.input.method, reader.token, readsEndAt - now), reader.token, {
        ...context,
        budgetEndsAt: readsEndAt,
      }),
    );
    return true;
  }

  async #readUpstream(mode: PollingMode, url: string, method: string, token: string, timeoutMs?: number): Promise<PollReading & { answer?: UpstreamAnswer }> {
    try {
      // A status is small; a runaway answer must not be held (`pollConcurrency` polls run at once).
      const response = await this.deps.upstream.send({ method: 'GET', url, token, maxResponseBytes: this.deps.settings.pollMaxBytes, timeoutMs });
      const answer = answerOf(response);
      return { ...readPoll(mode, method, answer), answer };
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UpstreamLinkRefused') throw error;
      // Timeouts, resets and unreachable upstreams delay the poll; they never end the operation.
      return { kind: 'read-failed', status: error instanceof GatewayError ? error.status : 0 };
    }
  }

  /**
   * Records what a poll read: an end (the document, then its index entries), or the next poll
   * (the document, then the key's schedule). With the key's ETag, neither reads the key.
   */
  async #record(stored: StoredState, reading: PollReading & { answer?: UpstreamAnswer }, token: string, context: StepContext): Promise<void> {
    const { budgetEndsAt, keyEtag } = context;
    const lastPolledTime = this.records.iso();
    if (reading.kind === 'succeeded') {
      let output = { status: reading.answer?.status ?? 200, body: redactSecrets(reading.answer?.body) };
      const finalRead = stored.state.poll && finalReadOf(reading, stored.state.poll);
      if (finalRead) {
        const timeoutMs = budgetEndsAt === undefined ? undefined : Math.max(1, budgetEndsAt - this.deps.now());
        const final = await this.#readUpstream(finalRead.mode, finalRead.url, finalRead.method, token, timeoutMs);
        if (final.kind === 'failed') return this.#record(stored, final, token, { keyEtag });
        // A POST's result this read did not give (202, not ready yet, or a failed read): the poll
        // moves to its URL, so the status, which said Succeeded already, is not read again.
        if (final.kind !== 'succeeded' && finalRead.mode === 'location') return this.#recordNext(stored, this.#resultOutcome(final, finalRead.url), keyEtag);
        // With its answer, so a throttled read's Retry-After sets when the next one may come.
        if (final.kind !== 'succeeded' || !final.answer)
          return this.#record(stored, { kind: 'read-failed', status: final.answer?.status ?? 0, answer: final.answer }, token, { keyEtag });
        output = { status: final.answer.status, body: redactSecrets(final.answer.body) };
      }
      await this.records.end(
        stored,
        { runtimeStatus: 'Completed', output, customStatus: { upstreamState: reading.state, lastReadStatus: reading.answer?.status, lastPolledTime } },
        keyEtag,
      );
      return;
    }
    if (reading.kind === 'failed') {
      const status = reading.status >= 400 ? reading.status : 400;
      await this.records.end(
        stored,
        {
          runtimeStatus: 'Failed',
          output: { status, body: redactSecrets(reading.error) },
          customStatus: { upstreamState: reading.state, lastReadStatus: reading.status, lastPolledTime },
        },
        keyEtag,
      );
      return;
    }
    const poll = stored.state.poll;
    await this.#recordNext(stored, poll && readsResultOf(poll) ? this.#resultOutcome(reading, poll.url) : this.#outcomeOf(reading, poll?.mode), keyEtag);
  }

  /** What a read that did not end the operation tells of the next: when, and where (a running answer may name a new URL of its mode). */
  #outcomeOf(reading: UnendedReading, mode: PollingMode | undefined): ReadOutcome {
    const answer = reading.answer;
    return {
      ...reading,
      retryAfter: answer?.headers['retry-after'],
      answerStatus: answer?.status,
      movedTo: reading.kind === 'running' && answer && mode ? this.#movedPollUrl(mode, answer) : undefined,
    };
  }

  /** A read of a POST's result that did not give it: the poll reads the result at `url` (or the newer Location a 202 names) from now on. */
  #resultOutcome(reading: UnendedReading, url: string): ReadOutcome {
    const outcome = this.#outcomeOf(reading, 'location');
    return { ...outcome, movedTo: outcome.movedTo ?? url, readsResult: true };
  }

  /** Records the next poll: the document, then the key's schedule. */
  async #recordNext(stored: StoredState, outcome: ReadOutcome, keyEtag: string | undefined): Promise<void> {
    // Recorded only while the claim is this step's: once it lapsed, another instance may hold a
    // claim of its own, which this late record must not release.
    const claimedUntil = stored.state.poll?.claimedUntil;
    let recorded = false;
    const next = await this.records.write(stored, (state) => {
      if (state.poll?.claimedUntil !== claimedUntil) return state;
      recorded = true;
      return afterRead(state, outcome, this.deps.now(), this.deps.settings.pollInterval);
    });
    if (recorded && isActive(next.state)) await this.deps.index.scheduleKey(next.state.requestKey, next.state.id, scheduleOf(next.state), keyEtag);
  }

  /**
   * The newest poll URL a running answer names, if it is on our own upstream: a URL on another
   * origin is never read, so the one the app had is kept.
   */
  #movedPollUrl(mode: PollingMode, answer: UpstreamAnswer): string | undefined {
    const moved = movedPollUrlOf(mode, answer);
    return moved && isTrustedUrl(moved, this.deps.upstream.baseUrl) ? moved : undefined;
  }
}
