/**
 * Counts of uses shared by the app's instances, each bounded: a record `<prefix><time>/<key>`
 * (onceMarkers.ts' naming, so the janitor removes it once expired) whose text is the count. A use
 * is taken with one conditional write: a create (`If-None-Match: *`) the first time, else a
 * replace on the ETag the caller last saw (`If-Match`). When another instance wrote first, the
 * write fails its condition and the record is read again (one read), then written again. A use
 * past `max` is refused without a write. Storage decides which write is first, so no two
 * instances take the same use: the count is exact.
 */
import { ExpiringRecords } from './onceMarkers';
import { RecordStore, type RecordFormat } from './recordStore';

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

/** A record's text: `{"count":3}`. */
const countFormat: RecordFormat<number> = {
  text: (count) => JSON.stringify({ count }),
  value: (text) => {
    const count = (JSON.parse(text) as { count?: unknown }).count;
    return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : 0;
  },
  contentType: 'application/json',
};

export class UseCounters extends ExpiringRecords {
  /** The counts, the container made when the first finds none. */
  readonly #counts = new RecordStore({ container: this.container, budget: this.budget, makeContainer: 'when missing', format: countFormat });

  /**
   * Takes one use of `key` (at `atMs`) unless `max` were taken, app-wide. `seen` is what this
   * instance last saw of the record (its ETag saves the read); `extra` are uses this instance made
   * while storage could not count them, added to the record now. Every storage call of it runs
   * within one budget: a failure or stall is a StorageUnavailable GatewayError, the caller decides.
   */
  async take(atMs: number, key: string, max: number, seen?: SeenCount, extra = 0): Promise<CountedUse> {
    if (seen && seen.count >= max) return { taken: false, seen };
    const name = this.nameOf(atMs, key);
    return this.#counts.within('count a use', async (counts) => {
      let current = seen;
      // Each failed condition is another instance's use taken meanwhile: after `max` of them none is left.
      for (let attempt = 0; attempt <= max + 1; attempt += 1) {
        if (current && current.count >= max) return { taken: false, seen: current };
        // Uses made here meanwhile are recorded whether or not this one is taken.
        const recorded = (current?.count ?? 0) + extra;
        const taken = recorded < max;
        const count = taken ? recorded + 1 : recorded;
        // A replace of a record removed meanwhile fails as a conflict too: it is read again.
        const etag = current?.etag ? await counts.replace(name, count, current.etag) : await counts.create(name, count);
        if (etag !== undefined) return { taken, seen: { count, etag } };
        const found = await counts.read(name);
        current = found && { count: found.value, etag: found.etag };
      }
      return { taken: false, seen: current ?? { count: max, etag: '' } };
    });
  }
}
