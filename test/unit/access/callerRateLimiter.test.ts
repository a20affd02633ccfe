/** A caller's share of upstream calls: a burst up to its limit, refilled evenly, bounded memory. */
import { CallerRateLimiter } from '../../../src/access/callerRateLimiter';

describe('CallerRateLimiter', () => {
  it('allows a burst of the per-minute limit, then refuses with the wait until the next call', () => {
    const limiter = new CallerRateLimiter();
    const now = 1_000_000;
    const taken = Array.from({ length: 6 }, () => limiter.take('key:a', 'reads', 6, now));
    expect(taken.slice(0, 6).every((result) => result.allowed)).toBe(true);
    expect(limiter.take('key:a', 'reads', 6, now)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    // One call back every ten seconds.
    expect(limiter.take('key:a', 'reads', 6, now + 9_000).allowed).toBe(false);
    expect(limiter.take('key:a', 'reads', 6, now + 10_000).allowed).toBe(true);
  });

  it('keeps each caller and each kind apart', () => {
    const limiter = new CallerRateLimiter();
    expect(limiter.take('key:a', 'writes', 1, 0).allowed).toBe(true);
    expect(limiter.take('key:a', 'writes', 1, 0).allowed).toBe(false);
    expect(limiter.take('key:a', 'reads', 1, 0).allowed).toBe(true);
    expect(limiter.take('key:b', 'writes', 1, 0).allowed).toBe(true);
  });

  it('refuses everything at a limit of zero', () => {
    expect(new CallerRateLimiter().take('key:a', 'writes', 0, 0)).toEqual({ allowed: false, retryAfterSeconds: 60 });
  });

  it('stays within its bound when it refuses too (a limit of zero)', () => {
    const limiter = new CallerRateLimiter(2);
    expect(limiter.take('key:a', 'reads', 1, 0).allowed).toBe(true);
    for (const caller of ['key:b', 'key:c', 'key:d']) expect(limiter.take(caller, 'reads', 0, 0).allowed).toBe(false);
    // key:a's empty bucket was forgotten to make room for refused ones: it starts full again.
    expect(limiter.take('key:a', 'reads', 1, 0).allowed).toBe(true);
  });

  it('forgets the least recently used caller past its bound', () => {
    const limiter = new CallerRateLimiter(2);
    limiter.take('key:a', 'reads', 1, 0);
    limiter.take('key:b', 'reads', 1, 0);
    limiter.take('key:c', 'reads', 1, 0);
    // key:a's empty bucket was dropped: it starts full again.
    expect(limiter.take('key:a', 'reads', 1, 0).allowed).toBe(true);
    expect(limiter.take('key:c', 'reads', 1, 0).allowed).toBe(false);
  });

  it('takes back a call given back (one that sent nothing upstream), never past the limit', () => {
    const limiter = new CallerRateLimiter();
    expect(limiter.take('key:a', 'writes', 2, 0).allowed).toBe(true);
    expect(limiter.take('key:a', 'writes', 2, 0).allowed).toBe(true);
    limiter.giveBack('key:a', 'writes', 2, 0);
    expect(limiter.take('key:a', 'writes', 2, 0).allowed).toBe(true);
    expect(limiter.take('key:a', 'writes', 2, 0).allowed).toBe(false);
    // A full bucket stays at its limit.
    limiter.giveBack('key:b', 'writes', 2, 0);
    expect([1, 2, 3].map(() => limiter.take('key:b', 'writes', 2, 0).allowed)).toEqual([true, true, false]);
  });
});
