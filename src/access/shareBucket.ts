/**
 * The state of one caller's shared bucket (one per rate subject and kind of call), as stored in
 * its blob, and the arithmetic of taking a lease from it: a token bucket refilled at
 * `perMinute` over a minute, after API Management's `rate-limit-by-key`.
 *
 * A lease is taken from the bucket before its calls are made, so calls still held unused would
 * let a bucket that refills to its cap meanwhile give more than the share in a burst. The bucket
 * therefore records, for each instance that took a lease within a lease's lifetime, the calls it
 * held unused at its last lease and that lease's, and caps its tokens at the share less what
 * they hold: whatever the instances do with their leases, calls in any window stay within the
 * share and the window's refill. An instance's calls are no longer held once its next lease says
 * so, or once its lease expires.
 */

/** An instance's last lease: when (ms since the epoch, its clock), the calls it may still use, and which instance. */
export type LeaseRecord = [takenAt: number, held: number, taker: string];

export interface BucketState {
  tokens: number;
  /** When `tokens` was counted: refill runs from here. Never moved back, so clocks that differ never refill twice. */
  updatedAt: number;
  /** Each instance's last lease still live (within a lifetime of its taking), oldest first. */
  leases: LeaseRecord[];
}

/**
 * The most lease records a bucket keeps: more instances than that drawing within a lifetime
 * have their oldest two records merged into one as late as the later, which holds the cap lower
 * a little longer: calls lost to the caller, never added.
 */
export const maxLeaseRecords = 32;

/**
 * The taker of a merged record: no instance's name, so no instance's next lease replaces it
 * (which would drop the calls another instance still holds); it only expires.
 */
export const mergedTaker = '*merged';

/** The share of the remaining tokens one lease may take ahead of need, split between the instances drawing. */
const aheadFraction = 1 / 4;

export interface LeaseRequest {
  perMinute: number;
  now: number;
  lifetimeMs: number;
  /** Calls waiting on this lease now: taken whatever the size ahead of need. */
  waiting: number;
  /** Calls this instance still holds from its earlier leases, unused. */
  held: number;
  /** How many calls to take ahead of need at most: the instance's recent demand, held to the setting. */
  ahead: number;
  /** A write condition failed in this take: other instances draw on the bucket at the same moment. */
  contended: boolean;
  taker: string;
}

export interface LeaseOutcome {
  /** Calls leased (0: the bucket is empty). */
  count: number;
  /** The state to write (when `count` > 0). */
  next: BucketState;
  /** When the bucket holds one call again, for a refusal's Retry-After (when `count` is 0). */
  oneCallAt: number;
}

/** A bucket not written yet: full. */
export function fullBucket(perMinute: number, now: number): BucketState {
  return { tokens: perMinute, updatedAt: now, leases: [] };
}

/** The state as of `now`: leases past their lifetime dropped, tokens refilled up to the share less the leases still live. */
export function refilled(state: BucketState, perMinute: number, now: number, lifetimeMs: number): BucketState {
  const updatedAt = Math.max(state.updatedAt, now);
  const leases = state.leases.filter(([takenAt]) => takenAt > updatedAt - lifetimeMs);
  const held = leases.reduce((sum, [, count]) => sum + count, 0);
  const cap = Math.max(0, perMinute - held);
  const tokens = Math.min(cap, state.tokens + (Math.max(0, now - state.updatedAt) * perMinute) / 60_000);
  return { tokens, updatedAt, leases };
}

/**
 * How many calls to take: those waiting, and ahead of need as many as recent demand asks, but
 * one only when other instances drew at the same moment, and never more than a fraction of
 * what is left split between the instances drawing (an instance holding calls it may lose
 * leaves less for the others).
 */
function leaseSize(available: number, request: LeaseRequest, takers: number): number {
  const ahead = request.contended ? 1 : Math.max(1, Math.min(request.ahead, Math.floor((available * aheadFraction) / takers)));
  return Math.min(Math.floor(available), Math.max(request.waiting, ahead));
}

/** Takes a lease from `state` (the stored one, or undefined for a bucket never written). */
export function takeLease(state: BucketState | undefined, request: LeaseRequest): LeaseOutcome {
  const { perMinute, now, lifetimeMs } = request;
  const stored = state ?? fullBucket(perMinute, now);
  // This instance's own record stands for the calls it still holds now, which it knows better.
  const others = stored.leases.filter(([, , taker]) => taker !== request.taker);
  const own: LeaseRecord = [Math.max(stored.updatedAt, now), request.held, request.taker];
  const current = refilled({ ...stored, leases: [...others, own] }, perMinute, now, lifetimeMs);
  const live = current.leases.filter(([, , taker]) => taker !== request.taker);
  const takers = live.length + 1;
  const count = leaseSize(current.tokens, request, takers);
  const oneCallAt = perMinute > 0 ? current.updatedAt + Math.ceil(((1 - current.tokens) * 60_000) / perMinute) : current.updatedAt + 60_000;
  if (count < 1) return { count: 0, next: current, oneCallAt };
  const leases: LeaseRecord[] = [...live, [current.updatedAt, request.held + count, request.taker]];
  while (leases.length > maxLeaseRecords) {
    const [older, newer] = leases.splice(0, 2) as [LeaseRecord, LeaseRecord];
    leases.unshift([newer[0], older[1] + newer[1], mergedTaker]);
  }
  return { count, next: { tokens: current.tokens - count, updatedAt: current.updatedAt, leases }, oneCallAt };
}

/** A stored state, checked: anything else (written by hand, or by another version) counts as a full bucket, which a cap then holds to the share. */
export function parseBucket(text: string): BucketState | undefined {
  try {
    const value = JSON.parse(text) as Partial<BucketState>;
    const leases = Array.isArray(value.leases)
      ? value.leases
          .filter(
            (lease): lease is LeaseRecord => Array.isArray(lease) && Number.isFinite(lease[0]) && Number.isFinite(lease[1]) && typeof lease[2] === 'string',
          )
          .slice(-maxLeaseRecords)
      : [];
    if (!Number.isFinite(value.tokens) || !Number.isFinite(value.updatedAt)) return undefined;
    return { tokens: Math.max(0, value.tokens!), updatedAt: value.updatedAt!, leases };
  } catch {
    return undefined;
  }
}
