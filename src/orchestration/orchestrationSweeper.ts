/**
 * The poller's run: what the index says is due (polls, deadlines, interrupted starts, keys an
 * instance left behind), worked off by the stepper; then the deliveries due, the purges due,
 * and the janitor's turn, within one housekeeping budget.
 */
import type { GatewayError } from '../errors';
import { mapConcurrently } from '../concurrency';
import type { EndDeliveries, EngineDependencies, PollReader, SweepResult } from './engineSettings';
import type { OrchestrationJanitor } from './orchestrationJanitor';
import type { ActiveEntry } from './orchestrationIndex';
import type { OrchestrationRecords } from './orchestrationRecords';
import { isActive } from './orchestrationState';
import type { OrchestrationStepper } from './orchestrationStepper';
import { scheduleOf } from './transitions';

export interface SweeperParts {
  records: OrchestrationRecords;
  stepper: OrchestrationStepper;
  notifications: EndDeliveries;
  janitor: OrchestrationJanitor;
}

export class OrchestrationSweeper {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'settings' | 'now'>,
    private readonly parts: SweeperParts,
  ) {}

  /**
   * One run of the poller, costing what is due rather than what is stored: it lists the active
   * orchestrations from the index (never the ended ones), advances those due, starts the due
   * notifications (waiting for them at most `deliveryWaitMs`), purges what passed its retention
   * in a bounded batch, and gives the janitor its turn, the last three within `housekeepingBudgetMs`.
   *
   * Polls that fall due within `lookaheadMs` (the time until the timer's next run) are waited
   * for and made in this run, so the timer's period does not add to the upstream's interval;
   * none is made before its time. Without a token (passthrough mode: only callers hold one) no
   * poll is made, but deadlines, interrupted starts, notifications and retention still apply,
   * as they need no upstream call.
   *
   * Due work is taken in due order, `pollConcurrency` steps at once. With `runBudgetMs`, no
   * step is begun after it: what is left stays due and, being due earliest, is taken first by
   * the next run, so a burst is worked off in order over as many runs as it needs, none
   * skipped; the run counts it as `deferred`.
   */
  async sweep(token: string | undefined, lookaheadMs = 0, runBudgetMs?: number): Promise<SweepResult> {
    const { index, settings } = this.deps;
    const startedAt = this.deps.now();
    const runEndsAt = runBudgetMs === undefined ? Infinity : startedAt + runBudgetMs;
    const reader = token === undefined ? undefined : { token };
    const result: SweepResult = { durationMs: 0, due: 0, polled: 0, delivered: 0, purged: 0, reconciled: 0, deferred: 0, janitorScanned: 0 };
    // A new deployment's poller may run before any start has made the container.
    await this.deps.store.ensureReady();

    // What fell due while the run worked (a start's first poll, another's next) is listed again
    // and taken in the same run, each entry once, until nothing new is due or the time is up.
    const taken = new Set<string>();
    for (let lookahead = reader ? lookaheadMs : undefined; this.deps.now() < runEndsAt && result.deferred === 0; lookahead = reader ? 0 : undefined) {
      const now = this.deps.now();
      const due = (await index.listActive()).filter((entry) => !taken.has(entry.requestKey) && this.#isDue(entry, now, lookahead));
      if (due.length === 0) break;
      due.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0));
      for (const entry of due) taken.add(entry.requestKey);
      result.due += due.length;
      await mapConcurrently(due, settings.pollConcurrency, (entry) => this.#takeDue(entry, reader, runEndsAt, result));
    }

    // Deliveries, purges and the janitor share one budget: a backlog of any waits for the next run.
    // Deliveries are started, not awaited: a run waits for them at most `deliveryWaitMs`.
    const housekeepingEndsAt = this.deps.now() + settings.housekeepingBudgetMs;
    try {
      result.delivered = await this.parts.notifications.run(housekeepingEndsAt);
    } catch (error) {
      this.parts.records.log({ step: 'delivery-error', code: (error as GatewayError).code ?? 'InternalError' });
    }

    result.purged = await this.#purgeExpired(housekeepingEndsAt);
    if (this.deps.now() < housekeepingEndsAt) {
      const janitor = await this.parts.janitor.turn();
      result.reconciled += janitor.repaired;
      result.janitorScanned = janitor.scanned;
    }
    if (this.deps.now() < housekeepingEndsAt) await this.parts.janitor.removeExpiredMarkers();
    result.durationMs = this.deps.now() - startedAt;
    return result;
  }

  /** One due entry, unless the run's time is up (then it is left to the next run). */
  async #takeDue(entry: ActiveEntry, reader: PollReader | undefined, runEndsAt: number, result: SweepResult): Promise<void> {
    const pastDeadline = entry.deadlineAt !== undefined && entry.deadlineAt <= this.deps.now();
    const waitMs = pastDeadline ? 0 : (entry.nextPollAt ?? 0) - this.deps.now();
    if (this.deps.now() + Math.max(0, waitMs) >= runEndsAt) {
      result.deferred += 1;
      return;
    }
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    try {
      const outcome = await this.#sweepActive(entry, reader);
      if (outcome === 'stepped') result.polled += 1;
      if (outcome === 'reconciled') result.reconciled += 1;
    } catch (error) {
      this.parts.records.log({ id: entry.id, step: 'poll-error', code: (error as GatewayError).code ?? 'InternalError' });
    }
  }

  /**
   * Whether an active entry needs this run: a poll due (within the lookahead, with a reader),
   * a deadline passed, a start pending too long, or a key written before its schedule was kept.
   */
  #isDue(entry: ActiveEntry, now: number, lookaheadMs: number | undefined): boolean {
    if (!entry.id) return true;
    if (entry.deadlineAt !== undefined && entry.deadlineAt <= now) return true;
    if (entry.nextPollAt === undefined) return now - (entry.startedAt ?? 0) >= this.deps.settings.pendingTimeoutMs;
    return lookaheadMs !== undefined && entry.nextPollAt <= now + lookaheadMs;
  }

  /**
   * One due entry: stepped from the version this instance last wrote when it has it (no read:
   * the claim is conditioned on that version), else from the document read; or, when the
   * document ended or never came to be, the index made to agree with it.
   */
  async #sweepActive(entry: ActiveEntry, reader: PollReader | undefined): Promise<'stepped' | 'reconciled' | undefined> {
    const { store, index } = this.deps;
    const scheduled = entry.id !== '' && entry.nextPollAt !== undefined;
    const cached = scheduled ? this.parts.records.cache.get(entry.id) : undefined;
    if (cached && (await this.parts.stepper.step(cached, reader, { keyEtag: entry.etag, keyChangedAt: entry.changedAt }))) return 'stepped';
    const id = entry.id || (await index.keyHolder(entry.requestKey))?.id;
    if (!id) return undefined;
    const stored = await store.read(id);
    if (!stored) {
      // A start whose instance died before its document was written: nothing reached the upstream.
      if (this.deps.now() - (entry.startedAt ?? 0) >= this.deps.settings.pendingTimeoutMs) await index.releaseKey(entry.requestKey, id, entry.etag);
      return undefined;
    }
    if (!isActive(stored.state)) {
      await this.parts.records.indexEnded(stored.state, entry.etag);
      return 'reconciled';
    }
    // A key written before its schedule was (an older version, or a start whose second write failed).
    if (!scheduled && stored.state.poll) await index.scheduleKey(entry.requestKey, id, scheduleOf(stored.state));
    return (await this.parts.stepper.step(stored, reader, { keyEtag: scheduled ? entry.etag : undefined, keyChangedAt: entry.changedAt }))
      ? 'stepped'
      : undefined;
  }

  /**
   * Purges what passed its retention, oldest first, in one bounded batch within the budget. One
   * with a notification still pending is kept (at least once, as the DELETE route refuses it):
   * its expiry moves past the delivery's next attempt and the time that attempt may be held,
   * so it is looked at again then and the others of the batch go on.
   */
  async #purgeExpired(endsAt: number): Promise<number> {
    const { store, index, settings } = this.deps;
    const expired = await index.expired(this.deps.now(), settings.purgeBatch);
    let purged = 0;
    await mapConcurrently(expired, settings.concurrency, async (entry) => {
      if (this.deps.now() >= endsAt) return;
      // The document's properties, not the outbox marker: a crash may have left the marker unwritten.
      const deliveryAt = (await store.readStatus(entry.id))?.nextDeliveryAt;
      if (deliveryAt !== undefined) {
        await index.markExpiry(entry.id, Math.max(deliveryAt, this.deps.now()) + settings.outbox.claimMs);
        await index.clearExpiry(entry.marker);
        return;
      }
      await Promise.all([store.delete(entry.id), index.clearOutbox(entry.id)]);
      await index.clearExpiry(entry.marker);
      purged += 1;
    });
    return purged;
  }
}
