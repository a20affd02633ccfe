/**
 * The versions of active orchestrations this instance last wrote, so its next poll of one
 * claims it straight away (a conditional write on the ETag it holds) instead of reading it
 * first. A version another instance replaced only costs that claim being refused and a read,
 * never a wrong step: every use is a write conditioned on the cached ETag.
 *
 * Bounded by the documents' size in all (their JSON text, as the store measured it when it
 * wrote them: a document may be megabytes, and is not serialised again to be kept), the oldest
 * written dropped first.
 */
import { isActive } from './orchestrationState';
import type { StoredState } from './orchestrationStore';

export class StateCache {
  readonly #entries = new Map<string, { stored: StoredState; bytes: number }>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(id: string): StoredState | undefined {
    return this.#entries.get(id)?.stored;
  }

  /** Keeps an active version of `bytes` (the newest written last), forgets an ended one. */
  keep(stored: StoredState, bytes: number): void {
    this.drop(stored.state.id);
    if (!isActive(stored.state)) return;
    if (bytes > this.maxBytes / 16) return;
    this.#entries.set(stored.state.id, { stored, bytes });
    this.#bytes += bytes;
    for (const [id, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(id);
      this.#bytes -= entry.bytes;
    }
  }

  drop(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}
