/**
 * A caller's share of upstream calls (ACCESS_POLICY `rate`) held across every instance of the
 * app: each instance takes a lease of a few calls at a time from the caller's shared bucket in
 * blob storage (shareBucketStore.ts) and serves calls from it, so a call costs no storage
 * request until the lease is used up, and the next lease is taken in the background while the
 * last calls of this one are served. Calls leased but not used before the lease expires are
 * lost to the caller, never added.
 *
 * When storage does not answer a lease within its budget, the instance falls back to a share of
 * its own per caller (callerRateLimiter.ts, kept in step with the calls served meanwhile) and
 * says so in one log line, trying storage again once a lease lifetime, and says so again when it
 * answers. A call never waits on storage longer than the budget, in all: when it passes before
 * the call got a lease (tries again after other instances' writes included), the call is answered
 * from the instance's own share.
 */
import { randomUUID } from 'node:crypto';
import type { BlockBlobClient } from '@azure/storage-blob';
import { LRUCache } from 'lru-cache';
import { OutageLatch } from '../storage';
import { StorageBudget } from '../storage';
import { CallerRateLimiter, type CallKind } from './callerRateLimiter';
import type { LeaseRequest } from './shareBucket';
import type { SeenBucket, ShareBucketStore } from './shareBucketStore';

/** One call drawn (with how to give it back when nothing went upstream), or a refusal. */
export type Drawn = { allowed: true; giveBack: () => void } | { allowed: false; retryAfterSeconds: number };

/** What the HTTP layer draws on: src/calls/authorization.ts. */
export interface CallerRates {
  take(subject: string, kind: CallKind, perMinute: number): Promise<Drawn>;
}

export interface SharedCallerRatesOptions {
  store: ShareBucketStore;
  /** Most calls one lease takes ahead of need (CALLER_SHARE_MAX_LEASE). */
  maxLease: number;
  /** How long a lease may be used (CALLER_SHARE_LEASE_SECONDS); also how often storage is tried again once it failed. */
  leaseLifetimeMs: number;
  /** The time budget of one lease take, its read, writes and tries again included, and of one call's wait on leases in all (CALLER_SHARE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Writes one lease take may try (CALLER_SHARE_ATTEMPTS), and rounds of leases one call may wait on. */
  attempts: number;
  /** Callers (subject and kind) remembered; the least recently used goes first (CALLER_SHARE_MAX_CALLERS). */
  maxCallers: number;
  now: () => number;
  /** Where the lines saying it fell back, and recovered, go (storage/outageLatch.ts' format). */
  warn: (line: string) => void;
}

interface Lease {
  remaining: number;
  expiresAt: number;
}

/** One caller's share of one kind, as this instance holds it. */
interface Share {
  blob: BlockBlobClient;
  /** The calls leased and not used yet, the soonest to expire first. */
  leases: Lease[];
  seen?: SeenBucket;
  taking?: Promise<void>;
  /** Calls waiting on the lease being taken. */
  waiting: number;
  /** The bucket was empty: no call before this time (ms). */
  emptyUntil: number;
  /** Recent demand on this instance: when it last served a call, and the time between calls (a moving average). */
  demand: { lastCallAt?: number; gapMs?: number };
}

/**
 * How far instances' clocks may differ: a lease is used no later than this before its lifetime
 * ends by this instance's clock, since an instance whose clock is ahead drops its record from the
 * bucket (and with it the calls it held off the cap) that much sooner. A quarter of the lifetime
 * when that is shorter, so a lease of a short lifetime stays usable.
 */
const clockSkewMarginMs = 2000;

/** Whether `work` ended before `deadline` (performance.now()); it goes on either way. */
async function endsBy(work: Promise<void>, deadline: number): Promise<boolean> {
  const left = deadline - performance.now();
  if (left <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, left, false)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

const refusal = (waitMs: number): Drawn => ({ allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });

export class SharedCallerRates implements CallerRates {
  readonly #shares: LRUCache<string, Share>;
  readonly #local: CallerRateLimiter;
  readonly #budget: StorageBudget;
  readonly #taker = randomUUID().slice(0, 8);
  /** Whether storage fails leases, tried again once a lease lifetime meanwhile. */
  readonly #storage: OutageLatch;

  constructor(private readonly options: SharedCallerRatesOptions) {
    this.#shares = new LRUCache({ max: options.maxCallers });
    this.#local = new CallerRateLimiter(options.maxCallers);
    this.#budget = new StorageBudget(options.timeoutMs, 'Caller shares');
    this.#storage = new OutageLatch({
      subject: 'caller shares',
      fallback: 'each instance keeps a share of its own for each caller (a caller may get its share on each instance)',
      retryAfterMs: options.leaseLifetimeMs,
      retry: 'one call',
      now: options.now,
      log: options.warn,
    });
  }

  /** Callers remembered now (for the bound's test). */
  get size(): number {
    return this.#shares.size;
  }

  /** Once every lease take under way (those ahead of need included) is over: for tests and the bench, which count storage requests. */
  async settled(): Promise<void> {
    await Promise.all([...this.#shares.values()].map((share) => share.taking));
  }

  async take(subject: string, kind: CallKind, perMinute: number): Promise<Drawn> {
    // A share of nothing refuses everything: no storage to ask.
    if (perMinute <= 0) return this.#locally(subject, kind, perMinute);
    const share = this.#shareOf(subject, kind);
    // One budget for the call, however many rounds of leases it waits on (in real time, as the waits are).
    const deadline = performance.now() + this.options.timeoutMs;
    for (let round = 0; ; round += 1) {
      if (this.#storage.down) {
        this.#tryStorageAgain(share, perMinute);
        return this.#locally(subject, kind, perMinute);
      }
      const now = this.options.now();
      const lease = this.#leased(share, now);
      if (lease) return this.#served(share, lease, subject, kind, perMinute, now);
      if (now < share.emptyUntil) return refusal(share.emptyUntil - now);
      // Calls of this caller at once on this instance outran the rounds of leases: the caller is
      // refused rather than given calls the shared bucket may not hold.
      if (round >= this.options.attempts) return refusal(1000);
      // The call's budget passed with no lease for it: answered from the instance's own share.
      if (round > 0 && performance.now() >= deadline) return this.#locally(subject, kind, perMinute);
      share.waiting += 1;
      let inTime = true;
      try {
        // The first lease take is bounded by its own budget, which started no earlier than the
        // call (so a storage failure is known when it ends); the later ones by what is left.
        const taking = this.#takeLease(share, perMinute);
        if (round === 0) await taking;
        else inTime = await endsBy(taking, deadline);
      } finally {
        share.waiting -= 1;
      }
      if (!inTime) return this.#locally(subject, kind, perMinute);
    }
  }

  #locally(subject: string, kind: CallKind, perMinute: number): Drawn {
    const taken = this.#local.take(subject, kind, perMinute, this.options.now());
    return taken.allowed ? { allowed: true, giveBack: () => this.#local.giveBack(subject, kind, perMinute, this.options.now()) } : taken;
  }

  /** The lease to serve a call from: the soonest to expire with calls left; expired ones are dropped (their calls lost). */
  #leased(share: Share, now: number): Lease | undefined {
    share.leases = share.leases.filter((lease) => lease.expiresAt > now && lease.remaining > 0);
    return share.leases[0];
  }

  /** The calls the share's leases still hold unused. */
  #held(share: Share, now: number): number {
    return share.leases.reduce((sum, lease) => sum + (lease.expiresAt > now ? lease.remaining : 0), 0);
  }

  #served(share: Share, lease: Lease, subject: string, kind: CallKind, perMinute: number, now: number): Drawn {
    lease.remaining -= 1;
    const { demand } = share;
    if (demand.lastCallAt !== undefined) {
      const gap = Math.max(0, now - demand.lastCallAt);
      demand.gapMs = demand.gapMs === undefined ? gap : 0.7 * demand.gapMs + 0.3 * gap;
    }
    demand.lastCallAt = now;
    // The instance's own share follows the calls served, so a fall back starts from where the caller is.
    this.#local.take(subject, kind, perMinute, now);
    const left = this.#held(share, now);
    // The next lease is taken ahead, in the background, when recent demand will use it before it expires.
    const ahead = this.#ahead(share);
    if (left <= Math.max(1, Math.floor(ahead / 4)) && ahead > 1 && !share.taking && now >= share.emptyUntil) void this.#takeLease(share, perMinute);
    return {
      allowed: true,
      giveBack: () => {
        this.#local.giveBack(subject, kind, perMinute, this.options.now());
        // Back to the lease it came from, while that may still be used; never to the shared bucket.
        if (lease.expiresAt <= this.options.now()) return;
        lease.remaining += 1;
        if (!share.leases.includes(lease)) share.leases = [...share.leases, lease].sort((a, b) => a.expiresAt - b.expiresAt);
      },
    };
  }

  /**
   * Calls to lease ahead of need: what recent demand uses in two thirds of a lease's lifetime
   * (the rest is slack, so they are used before it ends), within the setting; one until two
   * calls tell the demand.
   */
  #ahead(share: Share): number {
    const { gapMs } = share.demand;
    if (gapMs === undefined) return 1;
    return Math.max(1, Math.min(this.options.maxLease, Math.floor((this.options.leaseLifetimeMs * 2) / 3 / Math.max(1, gapMs))));
  }

  /** One lease take for the share at a time: calls arriving meanwhile wait on it. */
  #takeLease(share: Share, perMinute: number): Promise<void> {
    share.taking ??= this.#leaseFromStorage(share, perMinute).finally(() => (share.taking = undefined));
    return share.taking;
  }

  async #leaseFromStorage(share: Share, perMinute: number): Promise<void> {
    const { leaseLifetimeMs, attempts, now } = this.options;
    const startedAt = now();
    const request = (contended: boolean): LeaseRequest => ({
      perMinute,
      now: startedAt,
      lifetimeMs: leaseLifetimeMs,
      waiting: share.waiting,
      held: this.#held(share, startedAt),
      ahead: this.#ahead(share),
      contended,
      taker: this.#taker,
    });
    try {
      const taken = await this.#budget.call('take a lease of calls', (abortSignal) =>
        this.options.store.take(share.blob, share.seen, request, attempts, abortSignal),
      );
      this.#storage.answered();
      if (taken.kind === 'contended') {
        share.seen = undefined;
        return;
      }
      share.seen = taken.seen;
      const { count, oneCallAt } = taken.outcome;
      if (count === 0) {
        share.emptyUntil = oneCallAt;
        return;
      }
      // Expires by this instance's clock no later than its record in the bucket stops holding the
      // cap, by the clock of any instance within the margin of this one's.
      share.leases.push({ remaining: count, expiresAt: startedAt + leaseLifetimeMs - Math.min(clockSkewMarginMs, leaseLifetimeMs / 4) });
    } catch (error) {
      share.seen = undefined;
      this.#storage.failed(error);
    }
  }

  /** While storage is down, one lease take in the background once a lease lifetime: its success ends the fall back. */
  #tryStorageAgain(share: Share, perMinute: number): void {
    if (share.taking || !this.#storage.shouldTry()) return;
    void this.#takeLease(share, perMinute);
  }

  /** The share of `subject` and `kind`, kept as the most recently used; the least recently used is forgotten past the bound. */
  #shareOf(subject: string, kind: CallKind): Share {
    const key = `${kind}\u0000${subject}`;
    const share = this.#shares.get(key) ?? { blob: this.options.store.blobOf(subject, kind), leases: [], waiting: 0, emptyUntil: 0, demand: {} };
    this.#shares.set(key, share);
    return share;
  }
}
