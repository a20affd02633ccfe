/**
 * One call per key per window across every instance: the limiter's
 * state is a blob per key, changed only with ETag conditions, so of two instances asking at
 * once exactly one wins. A 429 from the service moves the next allowed time as it asks.
 */
import type { ContainerClient } from '@azure/storage-blob';
import { RecordStore, type StoredRecord } from '../storage';
import { StorageBudget } from '../storage';

export interface LimitState {
  /** Not before this time (ms since the epoch). */
  nextAllowedAt: number;
  lastCallAt?: number;
  reason?: 'call' | 'throttled';
}

export type Acquired = { allowed: true } | { allowed: false; retryAt: number };

/**
 * The longest any wait may be deferred: an upstream asking for more (a `retry-after` of
 * 99999999999999) is held to this, so a stored time is always one a date can hold.
 */
export const maxDeferMs = 24 * 3600_000;

export class DistributedRateLimiter {
  readonly #records: RecordStore<LimitState>;

  constructor(
    container: ContainerClient,
    private readonly windowMs: number,
    storageTimeoutMs = 10_000,
  ) {
    this.#records = new RecordStore({ container, budget: new StorageBudget(storageTimeoutMs, 'The rate limiter'), makeContainer: 'before the first call' });
  }

  #name(key: string): string {
    return `limits/${key}.json`;
  }

  /**
   * The stored state, with a next allowed time no later than a window and `maxDeferMs` after
   * the state was written: one written before that bound existed (or by hand) must not keep an
   * environment locked for ever, nor hold a time a date cannot.
   */
  async read(key: string, now = Date.now()): Promise<{ state?: LimitState; etag?: string }> {
    const stored = await this.#records.read(this.#name(key), 'read its state');
    return stored ? { state: this.#bounded(stored, now), etag: stored.etag } : {};
  }

  #bounded(stored: StoredRecord<LimitState>, now: number): LimitState {
    const state = stored.value;
    const latest = Math.min(now, stored.lastModified?.getTime() ?? now) + this.windowMs + maxDeferMs;
    const nextAllowedAt = Number.isFinite(state.nextAllowedAt) ? Math.min(state.nextAllowedAt, latest) : now;
    return { ...state, nextAllowedAt };
  }

  /** Reads the state and writes `change` of it on the ETag read, `attempts` writes at most. */
  #update(key: string, now: number, change: (state: LimitState | undefined) => LimitState | undefined, attempts: number) {
    return this.#records.update(this.#name(key), (stored) => change(stored && this.#bounded(stored, now)), attempts, {
      what: 'write its state',
      whatRead: 'read its state',
    });
  }

  /** Takes the one call of the window, or says when the next may be made. */
  async tryAcquire(key: string, now: number): Promise<Acquired> {
    const taken = await this.#update(
      key,
      now,
      (state) => (state && now < state.nextAllowedAt ? undefined : { nextAllowedAt: now + this.windowMs, lastCallAt: now, reason: 'call' }),
      1,
    );
    if (taken.kind === 'written') return { allowed: true };
    if (taken.kind === 'unchanged') return { allowed: false, retryAt: this.#bounded(taken.current!, now).nextAllowedAt };
    // Another instance took it between our read and write.
    const current = (await this.read(key, now)).state;
    return { allowed: false, retryAt: current?.nextAllowedAt ?? now + this.windowMs };
  }

  /**
   * Moves the next allowed time to `until` (never earlier than it already is), held to at most
   * `maxDeferMs` after `now`.
   */
  async deferUntil(key: string, until: number, now = Date.now()): Promise<void> {
    const bounded = Math.min(until, now + maxDeferMs);
    await this.#update(
      key,
      now,
      (state) => (state && state.nextAllowedAt >= bounded ? undefined : { ...state, nextAllowedAt: bounded, reason: 'throttled' }),
      5,
    );
  }
}
