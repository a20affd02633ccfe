/**
 * The documented download route obeys the same one-call-per-environment limit as the timer:
 * before the call it takes the window, or answers 429 with Retry-After;
 * a 429 from the service moves the next allowed time as the service asks.
 */
import { GatewayError } from '../errors';
import { parseRetryAfterMs } from '../upstream';
import type { UpstreamResponse } from '../upstream';
import { limiterKey } from './certificateRefresher';
import type { DistributedRateLimiter } from './rateLimiter';

export class DownloadGuard {
  constructor(
    private readonly limiter: DistributedRateLimiter,
    private readonly now: () => number,
  ) {}

  #key(params: Record<string, string>): string {
    return limiterKey({ projectId: Number(params.projectId), environmentId: params.environmentId ?? '' });
  }

  async acquire(params: Record<string, string>): Promise<void> {
    const now = this.now();
    const acquired = await this.limiter.tryAcquire(this.#key(params), now);
    if (!acquired.allowed) {
      const seconds = Math.max(1, Math.ceil((acquired.retryAt - now) / 1000));
      throw new GatewayError(
        'RateLimited',
        `One certificate download per environment per minute: the next is allowed at ${new Date(acquired.retryAt).toISOString()}.`,
        {
          target: 'environmentId',
          headers: { 'retry-after': String(seconds) },
        },
      );
    }
  }

  async observe(params: Record<string, string>, response: UpstreamResponse): Promise<void> {
    if (response.status !== 429) return;
    const waitMs = parseRetryAfterMs((name) => response.headers[name], this.now()) ?? 60_000;
    await this.limiter.deferUntil(this.#key(params), this.now() + waitMs, this.now());
  }
}
