/**
 * What a store that falls back while storage does not answer keeps of the outage: since when it
 * is down, when storage may be tried again, and the two log lines that tell it, one when storage
 * goes and one when it is back. Every fallback of the app logs in this one format:
 *
 *   {"event":"storage","subject":"caller shares","state":"down","code":"StorageUnavailable",
 *    "detail":"Caller shares did not take a lease of calls within 200 ms.",
 *    "fallback":"each instance keeps ...","retryAfterMs":10000}
 *   {"event":"storage","subject":"caller shares","state":"back","downForMs":12034}
 *
 * `detail` is the message of the app's own error (which names the store and what it failed to
 * do, never a URL or a key); any other error gives its code alone.
 */
import { GatewayError } from '../errors';

export interface OutageLatchOptions {
  /** What storage holds for the store, as the log names it ('caller shares'). */
  subject: string;
  /** What happens while storage is down, as the log says it. */
  fallback: string;
  /** How long after a failure storage is not tried. */
  retryAfterMs: number;
  /**
   * Once `retryAfterMs` passed: 'one call' lets the first call try storage and the others fall
   * back for another `retryAfterMs` (a call must not wait on storage known to be failing);
   * 'every call' lets every call try until one fails again.
   */
  retry: 'one call' | 'every call';
  now: () => number;
  log: (line: string) => void;
}

/** Storage down or answering, for one store that falls back meanwhile: logged once down and once back. */
export class OutageLatch {
  readonly #options: OutageLatchOptions;
  /** Since when storage failed (undefined while it answers). */
  #downSince: number | undefined;
  /** While down, no try before this time. */
  #retryAt = 0;

  constructor(options: OutageLatchOptions) {
    this.#options = options;
  }

  /** Whether storage failed and has not answered since. */
  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** Whether this call may try storage: always while it answers; while down, once `retryAfterMs` passed since the last failure (see `retry`). */
  shouldTry(): boolean {
    if (this.#downSince === undefined) return true;
    const now = this.#options.now();
    if (now < this.#retryAt) return false;
    if (this.#options.retry === 'one call') this.#retryAt = now + this.#options.retryAfterMs;
    return true;
  }

  /** Storage failed a call: not tried for `retryAfterMs`; the first failure of an outage is logged. */
  failed(error: unknown): void {
    const { subject, fallback, retryAfterMs, now, log } = this.#options;
    const at = now();
    this.#retryAt = at + retryAfterMs;
    if (this.#downSince !== undefined) return;
    this.#downSince = at;
    const code = (error as { code?: unknown } | undefined)?.code;
    log(
      JSON.stringify({
        event: 'storage',
        subject,
        state: 'down',
        code: typeof code === 'string' ? code : 'InternalError',
        ...(error instanceof GatewayError && { detail: error.message }),
        fallback,
        retryAfterMs,
      }),
    );
  }

  /** Storage answered a call: the end of an outage is logged, with how long it lasted. */
  answered(): void {
    if (this.#downSince === undefined) return;
    const downForMs = Math.max(0, this.#options.now() - this.#downSince);
    this.#downSince = undefined;
    this.#options.log(JSON.stringify({ event: 'storage', subject: this.#options.subject, state: 'back', downForMs }));
  }
}
