/**
 * When to send a request again, kept apart from the loop that does it (core-rest-pipeline's
 * retry strategies): repeat only what is safe, on 408/429/5xx and
 * connection errors, honouring the upstream's wait, with exponential back-off and jitter.
 */
import { parseRetryAfterMs, type HeaderReader } from './retryAfter';

const retriableStatuses = new Set([408, 429, 500, 502, 503, 504]);
const idempotentMethods = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Error codes meaning the request never left this machine, so repeating it is safe for any method. */
const notSentErrorCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
/** Error codes of a connection that failed after the request may have been sent. */
const transientErrorCodes = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT']);

export type AttemptOutcome = { kind: 'response'; status: number; readHeader: HeaderReader } | { kind: 'error'; code: string | undefined };

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * Returns how long to wait before the next attempt, or undefined when the outcome must be
 * final. `attempt` counts from 0 for the first try.
 */
export function retryDelayMs(
  method: string,
  outcome: AttemptOutcome,
  attempt: number,
  policy: RetryPolicy,
  nowMs: number,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxRetries) return undefined;
  const idempotent = idempotentMethods.has(method.toUpperCase());
  if (outcome.kind === 'error') {
    const code = outcome.code ?? '';
    const safe = notSentErrorCodes.has(code) || (idempotent && transientErrorCodes.has(code));
    return safe ? backoffMs(attempt, policy, random) : undefined;
  }
  if (!retriableStatuses.has(outcome.status)) return undefined;
  // A throttled request was refused before any work was done, so even a POST may be repeated;
  // any other failure of a POST may have done its work upstream and is never repeated.
  if (!idempotent && outcome.status !== 429) return undefined;
  const askedMs = parseRetryAfterMs(outcome.readHeader, nowMs);
  // A wait of nothing (`Retry-After: 0`, a date past) is honoured as a short one, so a hostile
  // upstream cannot drive the retries as a tight loop.
  return askedMs === undefined ? backoffMs(attempt, policy, random) : Math.max(askedMs, minimumAskedWaitMs);
}

/** The shortest wait made when the upstream asks for one. */
export const minimumAskedWaitMs = 100;

/** Exponential back-off with full jitter, capped. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
