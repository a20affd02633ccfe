/**
 * The posts made to each Slack response_url, counted app-wide: Slack takes 5 posts per
 * response_url within its 30 minutes, whichever instance makes them. Each post first takes one
 * use of a shared record (storage/useCounters.ts) named `chat-posts/<time Slack issued the
 * response_url>/<SHA-256 of the URL>` (the URL holds a token: it is never stored), which the
 * janitor removes once the response_url expired. One conditional write per post; a read too when
 * another instance posted since this one last wrote.
 *
 * When storage cannot count in time (down, or slower than STORAGE_TIMEOUT_MS), the post is counted
 * by this instance alone, from the last count it saw app-wide, with one log line for the outage
 * (and one when it is over: storage/outageLatch.ts);
 * the posts of the next `retryAfterMs` are counted so too without waiting on storage, then one
 * post tries it again. Going past Slack's 5 then needs storage down while several instances post
 * to one response_url, and costs no more than a post Slack refuses (the same end as one the app refuses). Sending the end to
 * SLACK_WEBHOOK_URL instead would show the whole channel what only the user saw (and lose it
 * where no webhook is set); refusing it would lose an end over a storage hiccup.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { OutageLatch } from '../../storage';
import type { SeenCount, UseCounters } from '../../storage';

export interface ResponseUrlPostsOptions {
  /** The shared counts; absent, each instance counts its own posts. */
  counts?: Pick<UseCounters, 'take'>;
  maxPosts: number;
  /** Most response_urls this instance remembers a count of (the oldest is forgotten past it). */
  maxTracked: number;
  now: () => number;
  /** How long after storage failed to count posts are counted here without trying it. */
  retryAfterMs?: number;
  log: (line: string) => void;
}

/** The default of `retryAfterMs`: a storage outage costs a post one storage budget at most this often. */
export const countRetryAfterMs = 30_000;

interface Known {
  /** The record as this instance last saw it, if ever. */
  seen?: SeenCount;
  /** Posts made here that the record does not hold yet (storage could not count them). */
  unrecorded: number;
  /** Of the posts made here, those a write under way adds to the record. */
  sending: number;
}

const nothingKnown: Known = { unrecorded: 0, sending: 0 };

/** The later of two sights of one record: counts only grow. */
function later(a: SeenCount | undefined, b: SeenCount): SeenCount {
  return a && a.count > b.count ? a : b;
}

export class ResponseUrlPosts {
  readonly #options: ResponseUrlPostsOptions;
  /** Per response_url, by a hash of it (the URL holds a token); the one least recently written is forgotten past `maxTracked` (a peek does not count). */
  readonly #known: LRUCache<string, Known>;
  /** Whether storage counts: while it does not, one post tries it once `retryAfterMs`, the others count here at once. */
  readonly #storage: OutageLatch;

  constructor(options: ResponseUrlPostsOptions) {
    this.#options = options;
    this.#known = new LRUCache({ max: options.maxTracked });
    this.#storage = new OutageLatch({
      subject: 'response_url post counts',
      fallback: 'each instance counts its own posts to a response_url, from the last count it saw app-wide',
      retryAfterMs: options.retryAfterMs ?? countRetryAfterMs,
      retry: 'one call',
      now: options.now,
      log: options.log,
    });
  }

  /** Whether one more post to `responseUrl` (issued at `issuedAtMs`, when known) may go. */
  async take(responseUrl: string, issuedAtMs: number | undefined): Promise<boolean> {
    const { counts, maxPosts } = this.#options;
    const key = createHash('sha256').update(responseUrl).digest('hex');
    // A target stored before response_urls carried their expiry names no shared record.
    if (counts && issuedAtMs !== undefined && this.#storage.shouldTry()) {
      const before = this.#known.peek(key) ?? nothingKnown;
      // The posts counted here alone go with this write: concurrent posts neither send them again nor forget them.
      const sent = before.unrecorded;
      this.#known.set(key, { seen: before.seen, unrecorded: 0, sending: before.sending + sent });
      try {
        const counted = await counts.take(issuedAtMs, key, maxPosts, before.seen, sent);
        this.#storage.answered();
        const now = this.#known.peek(key) ?? nothingKnown;
        this.#known.set(key, { seen: later(now.seen, counted.seen), unrecorded: now.unrecorded, sending: Math.max(0, now.sending - sent) });
        return counted.taken;
      } catch (error) {
        const now = this.#known.peek(key) ?? nothingKnown;
        this.#known.set(key, { seen: now.seen, unrecorded: now.unrecorded + sent, sending: Math.max(0, now.sending - sent) });
        this.#storage.failed(error);
      }
    }
    // Read again: other posts of this instance may have been counted while storage was tried.
    const now = this.#known.peek(key) ?? nothingKnown;
    if ((now.seen?.count ?? 0) + now.unrecorded + now.sending >= maxPosts) return false;
    this.#known.set(key, { ...now, unrecorded: now.unrecorded + 1 });
    return true;
  }
}
