/**
 * Counts of uses shared by the app's instances, each bounded: a record `<prefix><time>/<key>`
 * (onceMarkers.ts' naming, so the janitor removes it once expired) whose text is the count. A use
 * is taken with one conditional write: a create (`If-None-Match: *`) the first time, else a
 * replace on the ETag the caller last saw (`If-Match`). When another instance wrote first, the
 * write fails its condition and the record is read again (one read), then written again. A use
 * past `max` is refused without a write. Storage decides which write is first, so no two
 * instances take the same use: the count is exact.
 */
import type { BlockBlobClient } from '@azure/storage-blob';
import { downloadText, isConditionFailure, statusCodeOf } from './blobText';
import { ExpiringRecords } from './onceMarkers';

/** A record as one instance last saw it: its count and the ETag of that version. */
export interface SeenCount {
  count: number;
  etag: string;
}

export interface CountedUse {
  taken: boolean;
  /** The count after this call (the record's, whoever wrote it). */
  seen: SeenCount;
}

function countIn(text: string): number {
  const count = (JSON.parse(text) as { count?: unknown }).count;
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : 0;
}

export class UseCounters extends ExpiringRecords {
  /**
   * Takes one use of `key` (at `atMs`) unless `max` were taken, app-wide. `seen` is what this
   * instance last saw of the record (its ETag saves the read); `extra` are uses this instance made
   * while storage could not count them, added to the record now. Every storage call of it runs
   * within one budget: a failure or stall is a StorageUnavailable GatewayError, the caller decides.
   */
  async take(atMs: number, key: string, max: number, seen?: SeenCount, extra = 0): Promise<CountedUse> {
    if (seen && seen.count >= max) return { taken: false, seen };
    const blob = this.container.getBlockBlobClient(this.nameOf(atMs, key));
    return this.withContainer('count a use', async (abortSignal) => {
      let current = seen;
      // Each failed condition is another instance's use taken meanwhile: after `max` of them none is left.
      for (let attempt = 0; attempt <= max + 1; attempt += 1) {
        if (current && current.count >= max) return { taken: false, seen: current };
        // Uses made here meanwhile are recorded whether or not this one is taken.
        const recorded = (current?.count ?? 0) + extra;
        const taken = recorded < max;
        const count = taken ? recorded + 1 : recorded;
        const written = await this.#write(blob, count, current?.etag, abortSignal);
        if (written === 'no container') return written;
        if (written !== 'conflict') return { taken, seen: { count, etag: written } };
        current = await this.#read(blob, abortSignal);
      }
      return { taken: false, seen: current ?? { count: max, etag: '' } };
    });
  }

  /** The record's new ETag, or 'conflict' when its condition failed. */
  async #write(blob: BlockBlobClient, count: number, etag: string | undefined, abortSignal: AbortSignal): Promise<string | 'conflict' | 'no container'> {
    const text = JSON.stringify({ count });
    try {
      const response = await blob.upload(text, Buffer.byteLength(text), {
        conditions: etag ? { ifMatch: etag } : { ifNoneMatch: '*' },
        blobHTTPHeaders: { blobContentType: 'application/json' },
        abortSignal,
      });
      return response.etag ?? '';
    } catch (error) {
      if (isConditionFailure(error)) return 'conflict';
      // A replace of a record removed meanwhile (404 with an ETag) is a conflict: it is read again.
      if (statusCodeOf(error) === 404) return etag ? 'conflict' : 'no container';
      throw error;
    }
  }

  async #read(blob: BlockBlobClient, abortSignal: AbortSignal): Promise<SeenCount | undefined> {
    const found = await downloadText(blob, abortSignal);
    return found && { count: countIn(found.text), etag: found.etag };
  }
}
