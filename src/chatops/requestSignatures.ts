/**
 * How a chat platform proves a request is its own, checked on the raw body before anything is
 * parsed:
 * - Slack ("Verifying requests from Slack"): `X-Slack-Signature: v0=<hex HMAC-SHA256>` of
 *   `v0:<X-Slack-Request-Timestamp>:<body>`, keyed with the signing secret; a timestamp more than
 *   the tolerance away from now is refused, so a captured request cannot be sent again later.
 * - Teams (outgoing webhooks): `Authorization: HMAC <base64 HMAC-SHA256>` of the body, keyed with
 *   the base64-decoded security token. Teams signs no time, so the activity's own `timestamp`
 *   is held to the same tolerance once the signature proved the body is Teams'.
 * Signatures compare in constant time; a signature seen within the tolerance is refused again
 * (ReplayCache in this instance, and the app-wide record of chatReplays.ts), so a replay inside
 * the window fails too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureVerdict = { ok: true; signature: string } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // timingSafeEqual needs equal lengths; comparing b with itself keeps the time the same.
  return a.length === b.length ? timingSafeEqual(a, b) : !timingSafeEqual(b, b);
}

/** Slack's signature of a request: what Slack sends in `X-Slack-Signature` (and `npm run chat` signs with). */
export function slackSignatureOf(secret: string, timestamp: string, body: Buffer | string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;
}

export function verifySlackRequest(
  secret: string,
  headers: { timestamp: string | null; signature: string | null },
  body: Buffer,
  nowMs: number,
  toleranceSeconds: number,
): SignatureVerdict {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: 'stale' };
  return sameText(signature, slackSignatureOf(secret, timestamp, body)) ? { ok: true, signature } : { ok: false, reason: 'mismatch' };
}

/** Teams' signature of a request: what follows `HMAC ` in its `Authorization` header. */
export function teamsSignatureOf(base64Secret: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(base64Secret, 'base64')).update(body).digest('base64');
}

export function verifyTeamsRequest(base64Secret: string, authorization: string | null, body: Buffer): SignatureVerdict {
  const match = authorization ? /^HMAC ([A-Za-z0-9+/]{1,128}={0,2})$/.exec(authorization.trim()) : null;
  if (!match) return { ok: false, reason: 'missing' };
  return sameText(match[1]!, teamsSignatureOf(base64Secret, body)) ? { ok: true, signature: match[1]! } : { ok: false, reason: 'mismatch' };
}

/**
 * The signatures accepted within the tolerance, so each is accepted once. Bounded: past
 * `maxEntries` the oldest is forgotten, which is safe while the window holds fewer requests
 * than that (the default is far above any chat workspace's command rate).
 */
export class ReplayCache {
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  /** True the first time a signature is offered within the window; false for a replay. */
  firstUse(signature: string, nowMs: number): boolean {
    for (const [key, expiresAt] of this.#seen) {
      if (expiresAt > nowMs) break;
      this.#seen.delete(key);
    }
    if (this.#seen.has(signature)) return false;
    this.#seen.set(signature, nowMs + this.ttlMs);
    while (this.#seen.size > this.maxEntries) this.#seen.delete(this.#seen.keys().next().value!);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }
}
