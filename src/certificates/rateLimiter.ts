/**
 * One call per key per window across every instance (DESIGN.md section 5): the limiter's
 * state is a blob per key, changed only with ETag conditions, so of two instances asking at
 * once exactly one wins. A 429 from the service moves the next allowed time as it asks.
 */
import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { downloadText, isConditionFailure } from '../storage/blobText';

export interface LimitState {
  /** Not before this time (ms since the epoch). */
  nextAllowedAt: number;
  lastCallAt?: number;
  reason?: 'call' | 'throttled';
}

export type Acquired = { allowed: true } | { allowed: false; retryAt: number };

export class DistributedRateLimiter {
  #ready: Promise<unknown> | undefined;

  constructor(
    private readonly container: ContainerClient,
    private readonly windowMs: number,
  ) {}

  #blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(`limits/${key}.json`);
  }

  async #ensureReady(): Promise<void> {
    this.#ready ??= this.container.createIfNotExists().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    await this.#ready;
  }

  async read(key: string): Promise<{ state?: LimitState; etag?: string }> {
    await this.#ensureReady();
    try {
      const blob = await downloadText(this.#blob(key));
      return blob ? { state: JSON.parse(blob.text) as LimitState, etag: blob.etag } : {};
    } catch (error) {
      throw new GatewayError('StorageUnavailable', 'The rate limiter could not read its state.', { cause: error });
    }
  }

  async #write(key: string, state: LimitState, etag: string | undefined): Promise<boolean> {
    const text = JSON.stringify(state);
    try {
      await this.#blob(key).upload(text, Buffer.byteLength(text), { conditions: etag ? { ifMatch: etag } : { ifNoneMatch: '*' } });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw new GatewayError('StorageUnavailable', 'The rate limiter could not write its state.', { cause: error });
    }
  }

  /** Takes the one call of the window, or says when the next may be made. */
  async tryAcquire(key: string, now: number): Promise<Acquired> {
    const { state, etag } = await this.read(key);
    if (state && now < state.nextAllowedAt) return { allowed: false, retryAt: state.nextAllowedAt };
    if (await this.#write(key, { nextAllowedAt: now + this.windowMs, lastCallAt: now, reason: 'call' }, etag)) return { allowed: true };
    // Another instance took it between our read and write.
    const current = (await this.read(key)).state;
    return { allowed: false, retryAt: current?.nextAllowedAt ?? now + this.windowMs };
  }

  /** Moves the next allowed time to `until` (never earlier than it already is). */
  async deferUntil(key: string, until: number): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const { state, etag } = await this.read(key);
      if (state && state.nextAllowedAt >= until) return;
      if (await this.#write(key, { ...state, nextAllowedAt: until, reason: 'throttled' }, etag)) return;
    }
  }
}
