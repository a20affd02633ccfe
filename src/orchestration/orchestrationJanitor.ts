/**
 * The janitor: now and then, one page of documents checked against the index, repairing what a
 * crash between two writes left and what was stored before the index existed. Every document
 * is a hint checked against itself, so a repair is idempotent and any instance may make it.
 */
import { mapConcurrently } from '../concurrency';
import type { EngineDependencies } from './engineSettings';
import type { OrchestrationRecords } from './orchestrationRecords';
import { activeStatuses, isActive } from './orchestrationState';
import { scheduleOf } from './transitions';

export class OrchestrationJanitor {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'settings' | 'now' | 'expiringMarkers' | 'staleRecords'>,
    private readonly records: OrchestrationRecords,
  ) {}

  /**
   * The janitor's turn, at most once per `janitorIntervalMs` for the whole store: one page of
   * documents checked against the index. It repairs what a crash between two writes left (a
   * document that ended with its outbox unmarked, a start that died holding no key) and what
   * was stored before the index existed (purging ended documents past their retention directly,
   * except one with a notification still pending: it is kept, its outbox marked, until the
   * delivery ends). It also removes the receivers' circuit records nobody probed for long
   * (src/notifications/sharedCircuit.ts), at most `recordsBatch`.
   */
  async turn(): Promise<{ scanned: number; repaired: number }> {
    const { store, index, settings } = this.deps;
    const now = this.deps.now();
    const turn = await index.claimJanitor(now, settings.claimMs);
    if (!turn) return { scanned: 0, repaired: 0 };
    const page = await store.listPage(turn.marker, settings.janitorPageSize);
    let repaired = 0;
    await mapConcurrently(page.summaries, settings.concurrency, async (summary) => {
      const active = activeStatuses.includes(summary.runtimeStatus);
      if (!active) {
        const endedAt = Date.parse(summary.endedTime ?? summary.lastUpdatedTime);
        if (summary.nextDeliveryAt !== undefined) {
          await index.markOutbox(summary.id, summary.nextDeliveryAt);
        } else if (endedAt + settings.retentionMs <= now) {
          await this.records.purgeEnded({ ...summary, requestKey: summary.requestKey ?? '' });
          repaired += 1;
        }
        return;
      }
      const stored = await store.read(summary.id);
      if (!stored || !isActive(stored.state)) return;
      const holder = await index.keyHolder(stored.state.requestKey);
      if (holder?.id === summary.id) return;
      if (await this.records.failStalePending(stored, now)) repaired += 1;
      else if (!holder && stored.state.runtimeStatus === 'Running' && (await index.claimKey(stored.state.requestKey, summary.id, scheduleOf(stored.state))))
        repaired += 1;
    });
    await index.saveJanitor(page.marker, page.marker ? now : now + settings.janitorIntervalMs, turn.etag);
    await this.#removeStaleRecords(now);
    return { scanned: page.summaries.length, repaired };
  }

  /**
   * Every run, not only on the janitor's turn: the expired records of `expiringMarkers` (the chat
   * replay records, the response_urls' post counts, the callers' share buckets idle for long), at most `recordsBatch` of them in all, oldest
   * first; the rest in the next run. Any instance may do it at once (a delete of what is gone is
   * nothing), and a failure waits for the next run: a replay record kept longer refuses nothing a
   * fresh request could send, and a post count kept longer counts posts to a URL Slack expired.
   */
  async removeExpiredMarkers(): Promise<number> {
    const { expiringMarkers, settings } = this.deps;
    if (!expiringMarkers) return 0;
    try {
      return await expiringMarkers.removeExpired(this.deps.now(), settings.recordsBatch, settings.concurrency);
    } catch (error) {
      this.records.log({ step: 'markers-error', code: (error as { code?: string }).code ?? 'InternalError' });
      return 0;
    }
  }

  /** A failure waits for the next turn: a stale record is read as what it is (a circuit's cool-down long over). */
  async #removeStaleRecords(now: number): Promise<void> {
    const { staleRecords, settings } = this.deps;
    try {
      await staleRecords?.removeExpired(now, settings.recordsBatch, settings.concurrency);
    } catch (error) {
      this.records.log({ step: 'circuits-error', code: (error as { code?: string }).code ?? 'InternalError' });
    }
  }
}
