/**
 * How a chat platform proves a request is its own, checked on the raw body before anything is
 * parsed (each platform's check is its own: slack/slackSignature.ts, teams/teamsSignature.ts):
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
import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export type SignatureVerdict = { ok: true; signature: string } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

export function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // timingSafeEqual needs equal lengths; comparing b with itself keeps the time the same.
  return a.length === b.length ? timingSafeEqual(a, b) : !timingSafeEqual(b, b);
}

/**
 * The signatures accepted within the tolerance, so each is accepted once. Bounded: past
 * `maxEntries` the oldest is forgotten, which is safe while the window holds fewer requests
 * than that (the default is far above any chat workspace's command rate).
 */
export class ReplayCache {
  /** When each signature may be offered again, by signature; `has` does not touch the order, so the oldest set is the least recent. */
  readonly #seen: LRUCache<string, number>;

  constructor(
    maxEntries: number,
    private readonly ttlMs: number,
  ) {
    this.#seen = new LRUCache({ max: maxEntries });
  }

  /** True the first time a signature is offered within the window; false for a replay. */
  firstUse(signature: string, nowMs: number): boolean {
    // Expiry follows insertion (one ttl for all), so the expired ones are the oldest: dropped from that end.
    const expired: string[] = [];
    for (const key of this.#seen.rkeys()) {
      if (this.#seen.peek(key)! > nowMs) break;
      expired.push(key);
    }
    for (const key of expired) this.#seen.delete(key);
    if (this.#seen.has(signature)) return false;
    this.#seen.set(signature, nowMs + this.ttlMs);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }
}
