/**
 * The app-wide record of a receiver's open circuit (see sharedCircuit.ts): a small blob
 * `circuit/<SHA-256 of the origin>` in the orchestration container, there only while the circuit
 * is open, holding the origin and its next probe time (also in the blob's metadata, which a HEAD
 * reads and a listing returns, so neither downloads it). Every change is conditional: the first
 * open is a create (`If-None-Match: *`), taking the probe a replace on the ETag read (so of the
 * instances finding the cool-down over, one wins), closing a delete on the ETag this instance
 * knows (so an answer seen late does not close a circuit opened again since).
 */
import { createHash } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { mapConcurrently } from '../concurrency';
import { statusCodeOf } from '../storage';
import { RecordStore } from '../storage';
import type { StorageBudget } from '../storage';

const prefix = 'circuit/';

export interface CircuitRecord {
  etag: string;
  /** When the next probe is due (ms since the epoch). */
  nextProbeAt: number;
}

/** What a record's body holds (its metadata repeats the time, as ms since the epoch). */
interface CircuitBody {
  origin: string;
  nextProbeAt: string;
}

export class CircuitRecords {
  /** In the orchestration container, which the orchestration store makes. */
  readonly #records: RecordStore<CircuitBody>;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
    /** How long past its next probe time a record nobody probed is kept (then the janitor removes it). */
    readonly staleAfterMs: number,
  ) {
    this.#records = new RecordStore({ container, budget });
  }

  #name(origin: string): string {
    return `${prefix}${createHash('sha256').update(origin).digest('hex')}`;
  }

  /** The origin's record, or undefined when its circuit is closed app-wide. One HEAD. */
  async read(origin: string): Promise<CircuitRecord | undefined> {
    const head = await this.#records.head(this.#name(origin), 'read a receiver circuit');
    return head && { etag: head.etag, nextProbeAt: Number(head.metadata.nextprobeat ?? 0) || 0 };
  }

  /** Opens the circuit app-wide unless it is already open; the record's ETag, or undefined if another was first. */
  open(origin: string, nextProbeAt: number): Promise<string | undefined> {
    return this.#records.create(this.#name(origin), this.#body(origin, nextProbeAt), this.#written(nextProbeAt, 'open a receiver circuit'));
  }

  /** Takes the probe: moves the next probe time on, if the record is still at `etag`; the new ETag, or undefined if another instance was first. */
  takeProbe(origin: string, etag: string, nextProbeAt: number): Promise<string | undefined> {
    return this.#records.replace(this.#name(origin), this.#body(origin, nextProbeAt), etag, this.#written(nextProbeAt, 'take a receiver probe'));
  }

  /** Closes the circuit app-wide, if the record is still at `etag`. */
  async close(origin: string, etag: string): Promise<void> {
    await this.#records.remove(this.#name(origin), etag, 'close a receiver circuit');
  }

  #body(origin: string, nextProbeAt: number): CircuitBody {
    return { origin, nextProbeAt: new Date(nextProbeAt).toISOString() };
  }

  /** The next probe time in metadata too, so a HEAD (read) and a listing (removeExpired) read it without a download. */
  #written(nextProbeAt: number, what: string) {
    return { metadata: { nextprobeat: String(nextProbeAt) }, what };
  }

  /**
   * Removes the records whose next probe time passed more than `staleAfterMs` before `nowMs`: no
   * instance had a delivery waiting on them since. At most `max` (one listing of `circuit/`, whose
   * records are about as many as the receivers that are down).
   */
  async removeExpired(nowMs: number, max: number, concurrency = 8): Promise<number> {
    const stale: { name: string; etag: string }[] = [];
    try {
      const pages = this.budget.pages('list receiver circuits', (abortSignal) =>
        this.container.listBlobsFlat({ prefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: Math.min(5000, Math.max(1, max)) }),
      );
      listing: for await (const page of pages) {
        for (const item of page.segment.blobItems) {
          if (stale.length >= max) break listing;
          if (Number(item.metadata?.nextprobeat ?? 0) + this.staleAfterMs < nowMs) stale.push({ name: item.name, etag: item.properties.etag ?? '' });
        }
      }
    } catch (error) {
      if (statusCodeOf((error as { cause?: unknown }).cause) === 404) return 0;
      throw error;
    }
    // On the ETag listed: a record an instance moved on meanwhile is live again, and stays.
    await mapConcurrently(stale, concurrency, ({ name, etag }) => this.#records.remove(name, etag, 'remove a stale receiver circuit'));
    return stale.length;
  }
}
