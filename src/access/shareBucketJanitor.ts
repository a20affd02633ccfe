/**
 * The removal of callers' share buckets nobody drew on lately (shareBucketStore.ts), run by the
 * orchestration poller's janitor with the other expiring records (src/storage/onceMarkers.ts).
 * A rule for a role or for `*` gives every caller ever seen a bucket of its own: without this,
 * each would stay in storage for good.
 *
 * A bucket last written a minute, a lease lifetime and a margin for clocks that differ ago is
 * full (a minute refills any share) and holds no live lease record: exactly what an absent
 * bucket is read as. So removing it changes nothing a caller gets. The delete is conditioned
 * on the ETag listed, so a bucket an instance wrote meanwhile stays; an instance that still
 * holds the removed bucket's ETag finds its write refused and reads the bucket (absent) again.
 */
import type { ContainerClient } from '@azure/storage-blob';
import { mapConcurrently } from '../concurrency';
import { statusCodeOf } from '../storage';
import type { Expiring } from '../storage';
import { RecordStore } from '../storage';
import type { StorageBudget } from '../storage';
import { shareBucketPrefix } from './shareBucketStore';

/** How far the storage service's clock (a blob's last write) and an instance's may differ. */
const clockSkewMarginMs = 60_000;

/** The most buckets one listing request returns (the storage service's own bound). */
const pageSize = 5000;

export class IdleShareBuckets implements Expiring {
  /** Where the next run's listing resumes (undefined: from the start), so every bucket is looked at in turn. */
  #marker: string | undefined;
  readonly idleAfterMs: number;
  /** The buckets, to remove them on their ETag. */
  readonly #buckets: RecordStore<unknown>;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
    leaseLifetimeMs: number,
  ) {
    this.idleAfterMs = 60_000 + leaseLifetimeMs + clockSkewMarginMs;
    this.#buckets = new RecordStore({ container, budget });
  }

  /**
   * One listing request (a page of buckets, from where the last run stopped) and the deletes of
   * the idle ones in it, at most `max`. Idempotent: instances may run it at once.
   */
  async removeExpired(nowMs: number, max: number, concurrency = 8): Promise<number> {
    if (max <= 0) return 0;
    const idle: { name: string; etag: string }[] = [];
    try {
      const pages = this.budget.pages('list caller share buckets', (abortSignal) =>
        this.container.listBlobsFlat({ prefix: shareBucketPrefix, abortSignal }).byPage({ continuationToken: this.#marker, maxPageSize: pageSize }),
      );
      for await (const page of pages) {
        let complete = true;
        for (const item of page.segment.blobItems) {
          if (idle.length >= max) {
            // The rest of this page waits for the next run: the marker stays.
            complete = false;
            break;
          }
          if (item.properties.lastModified.getTime() + this.idleAfterMs < nowMs) idle.push({ name: item.name, etag: item.properties.etag ?? '' });
        }
        if (complete) this.#marker = page.continuationToken || undefined;
        break;
      }
    } catch (error) {
      // No container yet: no bucket was ever written.
      if (statusCodeOf((error as { cause?: unknown }).cause) === 404) return 0;
      throw error;
    }
    const removed = await mapConcurrently(idle, concurrency, ({ name, etag }) => this.#buckets.remove(name, etag, 'remove an idle caller share bucket'));
    return removed.filter(Boolean).length;
  }
}
