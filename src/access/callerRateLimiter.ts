/**
 * A token bucket per caller and per kind of upstream call (reads, writes), after API
 * Management's `rate-limit-by-key`: a caller may burst up to its per-minute limit, refilled
 * evenly over the minute. The management service throttles per identity, and in `managed` mode
 * every caller shares the app's, so one noisy caller must not drain the budget of the others.
 *
 * This bucket is one instance's own: the shares held across instances (sharedCallerRates.ts)
 * fall back to it while storage does not answer, and keep it in step with the calls they serve.
 */
import { LRUCache } from 'lru-cache';

export type CallKind = 'reads' | 'writes';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type Taken = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class CallerRateLimiter {
  readonly #buckets: LRUCache<string, Bucket>;

  /** `maxCallers` bounds memory: the bucket least recently used goes first. */
  constructor(maxCallers = 10_000) {
    this.#buckets = new LRUCache({ max: maxCallers });
  }

  /** Takes one call from the caller's bucket of `kind` holding `perMinute`. */
  take(caller: string, kind: CallKind, perMinute: number, now: number): Taken {
    const key = `${kind}\u0000${caller}`;
    const refilled = this.#refilled(key, perMinute, now);
    const allowed = refilled >= 1;
    this.#buckets.set(key, { tokens: allowed ? refilled - 1 : refilled, updatedAt: now });
    if (allowed) return { allowed: true };
    const waitMs = perMinute > 0 ? ((1 - refilled) * 60_000) / perMinute : 60_000;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Puts back one call taken for a request that then sent nothing upstream (never past the limit). */
  giveBack(caller: string, kind: CallKind, perMinute: number, now: number): void {
    const key = `${kind}\u0000${caller}`;
    this.#buckets.set(key, { tokens: Math.min(perMinute, this.#refilled(key, perMinute, now) + 1), updatedAt: now });
  }

  #refilled(key: string, perMinute: number, now: number): number {
    const previous = this.#buckets.get(key);
    return previous ? Math.min(perMinute, previous.tokens + ((now - previous.updatedAt) * perMinute) / 60_000) : perMinute;
  }
}
