/**
 * Records that expire, shared by the whole app in one container: each is a blob named
 * `<prefix><time>/<key>`, the time (ms since the epoch, 13 digits) leading so that a listing
 * returns the oldest first. Removing the expired ones is one listing and their deletes, stopping
 * at the first still live, whatever number are live. Two kinds share this naming and its removal:
 *
 * - OnceMarkers, names taken once by the whole app, whichever instance asks: each is an empty blob
 *   created only if none exists (`If-None-Match: *`), so of two instances taking the same name at
 *   once exactly one succeeds (the chat routes' replay records);
 * - UseCounters (useCounters.ts), a count of uses shared by the instances, moved with a
 *   conditional write (the posts made to a Slack response_url).
 */
import type { ContainerClient } from '@azure/storage-blob';
import { mapConcurrently } from '../concurrency';
import { statusCodeOf } from './blobText';
import { markerFormat, RecordStore } from './recordStore';
import type { StorageBudget } from './storageBudget';

const timeDigits = 13;

/** What the janitor removes: the records past their lifetime, at most `max` in one call. */
export interface Expiring {
  removeExpired(nowMs: number, max: number, concurrency?: number): Promise<number>;
}

export class ExpiringRecords implements Expiring {
  constructor(
    protected readonly container: ContainerClient,
    private readonly prefix: string,
    protected readonly budget: StorageBudget,
    /** How long after its time a record is kept (then the janitor may remove it). */
    readonly lifetimeMs: number,
  ) {}

  nameOf(atMs: number, key: string): string {
    return `${this.prefix}${String(Math.max(0, Math.floor(atMs))).padStart(timeDigits, '0')}/${key}`;
  }

  /**
   * Removes the records whose time is more than `lifetimeMs` before `nowMs`, at most `max` in one
   * call (oldest first; what is left goes in the next). Idempotent: instances may run it at once.
   */
  async removeExpired(nowMs: number, max: number, concurrency = 8): Promise<number> {
    const cutoff = nowMs - this.lifetimeMs;
    const expired: string[] = [];
    if (max <= 0) return 0;
    try {
      const pages = this.budget.pages('list expired records', (abortSignal) =>
        this.container.listBlobsFlat({ prefix: this.prefix, abortSignal }).byPage({ maxPageSize: Math.min(5000, max) }),
      );
      listing: for await (const page of pages) {
        for (const item of page.segment.blobItems) {
          const time = Number(item.name.slice(this.prefix.length, this.prefix.length + timeDigits));
          if (!(time < cutoff) || expired.length >= max) break listing;
          expired.push(item.name);
        }
      }
    } catch (error) {
      // No container yet: nothing was ever recorded.
      if (statusCodeOf((error as { cause?: unknown }).cause) === 404) return 0;
      throw error;
    }
    await mapConcurrently(expired, concurrency, (name) =>
      this.budget.call('remove an expired record', (abortSignal) =>
        this.container.deleteBlob(name, { abortSignal }).catch((error: unknown) => {
          if (statusCodeOf(error) !== 404) throw error;
        }),
      ),
    );
    return expired.length;
  }
}

export class OnceMarkers extends ExpiringRecords {
  /** Empty blobs, the container made when the first finds none. */
  readonly #markers = new RecordStore({ container: this.container, budget: this.budget, makeContainer: 'when missing', format: markerFormat });

  /**
   * True the first time `key` is taken at `atMs` by any instance; false once it was. One
   * conditional create (and, the first time ever, the container's creation). A storage failure
   * or stall is a StorageUnavailable GatewayError within the budget: the caller decides.
   */
  async take(atMs: number, key: string): Promise<boolean> {
    return (await this.#markers.create(this.nameOf(atMs, key), null, { what: 'record a signed request' })) !== undefined;
  }
}

/**
 * Several kinds of expiring records as one for the janitor: each in turn, sharing one `max`, so a
 * run removes at most `max` records in all. A failure of one does not keep the others from their
 * turn; the first failure is thrown after them.
 */
export function allExpiring(kinds: readonly Expiring[]): Expiring {
  return {
    async removeExpired(nowMs, max, concurrency) {
      let removed = 0;
      let failure: unknown;
      for (const kind of kinds) {
        if (removed >= max) break;
        try {
          removed += await kind.removeExpired(nowMs, max - removed, concurrency);
        } catch (error) {
          failure ??= error;
        }
      }
      if (failure !== undefined) throw failure;
      return removed;
    },
  };
}
