/**
 * One call per key per window across every instance: the limiter's
 * state is a blob per key, changed only with ETag conditions, so of two instances asking at
 * once exactly one wins. A 429 from the service moves the next allowed time as it asks.
 */
import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { downloadText } from '../storage/blobText';
import { StorageBudget } from '../storage/storageBudget';

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
  #ready: Promise<unknown> | undefined;
  readonly #budget: StorageBudget;

  constructor(
    private readonly container: ContainerClient,
    private readonly windowMs: number,
    storageTimeoutMs = 10_000,
  ) {
    this.#budget = new StorageBudget(storageTimeoutMs, 'The rate limiter');
  }

  #blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(`limits/${key}.json`);
  }

  async #ensureReady(): Promise<void> {
    this.#ready ??= this.#budget
      .call('create its container', (abortSignal) => this.container.createIfNotExists({ abortSignal }))
      .catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
    await this.#ready;
  }

  /**
   * The stored state, with a next allowed time no later than a window and `maxDeferMs` after
   * the state was written: one written before that bound existed (or by hand) must not keep an
   * environment locked for ever, nor hold a time a date cannot.
   */
  async read(key: string, now = Date.now()): Promise<{ state?: LimitState; etag?: string }> {
    await this.#ensureReady();
    const blob = await this.#budget.call('read its state', (abortSignal) => downloadText(this.#blob(key), abortSignal));
    if (!blob) return {};
    const state = JSON.parse(blob.text) as LimitState;
    const latest = Math.min(now, blob.lastModified?.getTime() ?? now) + this.windowMs + maxDeferMs;
    const nextAllowedAt = Number.isFinite(state.nextAllowedAt) ? Math.min(state.nextAllowedAt, latest) : now;
    return { state: { ...state, nextAllowedAt }, etag: blob.etag };
  }

  #write(key: string, state: LimitState, etag: string | undefined): Promise<boolean> {
    const text = JSON.stringify(state);
    return this.#budget
      .conditional('write its state', (abortSignal) =>
        this.#blob(key).upload(text, Buffer.byteLength(text), { conditions: etag ? { ifMatch: etag } : { ifNoneMatch: '*' }, abortSignal }),
      )
      .then((written) => written !== undefined);
  }

  /** Takes the one call of the window, or says when the next may be made. */
  async tryAcquire(key: string, now: number): Promise<Acquired> {
    const { state, etag } = await this.read(key, now);
    if (state && now < state.nextAllowedAt) return { allowed: false, retryAt: state.nextAllowedAt };
    if (await this.#write(key, { nextAllowedAt: now + this.windowMs, lastCallAt: now, reason: 'call' }, etag)) return { allowed: true };
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
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const { state, etag } = await this.read(key, now);
      if (state && state.nextAllowedAt >= bounded) return;
      if (await this.#write(key, { ...state, nextAllowedAt: bounded, reason: 'throttled' }, etag)) return;
    }
  }
}
