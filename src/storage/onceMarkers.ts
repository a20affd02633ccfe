/**
 * Names taken once by the whole app, whichever instance asks: each is an empty blob created only
 * if none exists (`If-None-Match: *`), so of two instances taking the same name at once exactly
 * one succeeds. A marker is named `<prefix><time>/<key>`, the time (ms since the epoch, 13
 * digits) leading so that a listing returns the oldest first: removing the expired ones is one
 * listing and their deletes, stopping at the first still live, whatever number are live.
 */
import type { ContainerClient } from '@azure/storage-blob';
import { mapConcurrently } from '../concurrency';
import { isConditionFailure, statusCodeOf } from './blobText';
import type { StorageBudget } from './storageBudget';

const timeDigits = 13;

export class OnceMarkers {
  constructor(
    private readonly container: ContainerClient,
    private readonly prefix: string,
    private readonly budget: StorageBudget,
    /** How long after its time a marker is kept (then the janitor may remove it). */
    readonly lifetimeMs: number,
  ) {}

  nameOf(atMs: number, key: string): string {
    return `${this.prefix}${String(Math.max(0, Math.floor(atMs))).padStart(timeDigits, '0')}/${key}`;
  }

  /**
   * True the first time `key` is taken at `atMs` by any instance; false once it was. One
   * conditional create (and, the first time ever, the container's creation). A storage failure
   * or stall is a StorageUnavailable GatewayError within the budget: the caller decides.
   */
  async take(atMs: number, key: string): Promise<boolean> {
    const blob = this.container.getBlockBlobClient(this.nameOf(atMs, key));
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.budget.call('record a signed request', async (abortSignal) => {
        try {
          await blob.upload('', 0, { conditions: { ifNoneMatch: '*' }, abortSignal });
          return 'taken';
        } catch (error) {
          if (isConditionFailure(error)) return 'seen';
          if (statusCodeOf(error) === 404 && attempt === 1) return 'no container';
          throw error;
        }
      });
      if (outcome !== 'no container') return outcome === 'taken';
      await this.budget.call('create its container', (abortSignal) => this.container.createIfNotExists({ abortSignal }));
    }
  }

  /**
   * Removes the markers whose time is more than `lifetimeMs` before `nowMs`, at most `max` in one
   * call (oldest first; what is left goes in the next). Idempotent: instances may run it at once.
   */
  async removeExpired(nowMs: number, max: number, concurrency = 8): Promise<number> {
    const cutoff = nowMs - this.lifetimeMs;
    const expired: string[] = [];
    try {
      const pages = this.budget.pages('list expired markers', (abortSignal) =>
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
    await mapConcurrently(expired, concurrency, (name) => this.budget.call('remove an expired marker', (abortSignal) => this.container.deleteBlob(name, { abortSignal }).catch((error: unknown) => {
      if (statusCodeOf(error) !== 404) throw error;
    })));
    return expired.length;
  }
}
