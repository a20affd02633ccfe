/** The arithmetic of a caller's shared bucket (src/access/shareBucket.ts): refill, the cap by calls held, lease sizes, what is read. */
import { maxLeaseRecords, mergedTaker, parseBucket, refilled, takeLease, type LeaseRequest } from '../../../src/access/shareBucket';

const at = 1_000_000;
const request = (fields: Partial<LeaseRequest> = {}): LeaseRequest => ({
  perMinute: 60,
  now: at,
  lifetimeMs: 10_000,
  waiting: 1,
  held: 0,
  ahead: 10,
  contended: false,
  taker: 'a',
  ...fields,
});

describe('a shared bucket', () => {
  it('refills at the share over a minute, up to the share less the calls other instances hold', () => {
    expect(refilled({ tokens: 0, updatedAt: at, leases: [] }, 60, at + 30_000, 10_000).tokens).toBe(30);
    expect(refilled({ tokens: 0, updatedAt: at, leases: [] }, 60, at + 120_000, 10_000).tokens).toBe(60);
    // Eight calls held by another instance's lease still live: the cap is 52 until it expires.
    const held = { tokens: 50, updatedAt: at, leases: [[at, 8, 'b'] as [number, number, string]] };
    expect(refilled(held, 60, at + 5000, 10_000).tokens).toBe(52);
    expect(refilled(held, 60, at + 10_000, 10_000).tokens).toBe(60);
  });

  it('never moves its time back: a clock behind refills nothing twice', () => {
    const state = refilled({ tokens: 10, updatedAt: at, leases: [] }, 60, at - 5000, 10_000);
    expect(state).toEqual({ tokens: 10, updatedAt: at, leases: [] });
  });

  it('leases what is waiting and ahead of need a fraction of what is left, split between the instances drawing', () => {
    expect(takeLease(undefined, request()).count).toBe(10);
    expect(takeLease({ tokens: 20, updatedAt: at, leases: [] }, request()).count).toBe(5);
    expect(
      takeLease(
        {
          tokens: 60,
          updatedAt: at,
          leases: [
            [at, 1, 'b'],
            [at, 1, 'c'],
          ],
        },
        request(),
      ).count,
    ).toBe(4);
    expect(takeLease({ tokens: 60, updatedAt: at, leases: [] }, request({ contended: true })).count).toBe(1);
    // Calls waiting are taken whatever the size ahead, within what is there.
    expect(takeLease({ tokens: 3, updatedAt: at, leases: [] }, request({ waiting: 5 })).count).toBe(3);
    expect(takeLease({ tokens: 0.5, updatedAt: at, leases: [] }, request())).toEqual(expect.objectContaining({ count: 0, oneCallAt: at + 500 }));
  });

  it('keeps one record per instance, the calls it holds with the new lease, merging the oldest past the bound', () => {
    const { next } = takeLease({ tokens: 60, updatedAt: at, leases: [[at - 1000, 9, 'a']] }, request({ held: 2, ahead: 3 }));
    expect(next.leases).toEqual([[at, 5, 'a']]);
    const many = Array.from({ length: maxLeaseRecords }, (_, index) => [at - 1000 + index, 1, `i${index}`] as [number, number, string]);
    const merged = takeLease({ tokens: 60, updatedAt: at, leases: many }, request({ ahead: 1 })).next.leases;
    expect(merged).toHaveLength(maxLeaseRecords);
    // Nothing held is dropped: the merged record counts both, as late as the later.
    expect(merged[0]).toEqual([at - 999, 2, mergedTaker]);
    expect(merged.reduce((sum, [, held]) => sum + held, 0)).toBe(maxLeaseRecords + 1);
    // Instance i1's next lease replaces its own record only, never the calls merged with i0's.
    const afterI1 = takeLease({ tokens: 60, updatedAt: at, leases: merged }, request({ taker: 'i1', ahead: 1 })).next.leases;
    expect(afterI1[0]).toEqual([at - 998, 3, mergedTaker]);
    expect(afterI1.reduce((sum, [, held]) => sum + held, 0)).toBe(maxLeaseRecords + 2);
  });

  it('reads a stored state it can trust, and nothing else', () => {
    expect(parseBucket('{"tokens":3,"updatedAt":5,"leases":[[5,1,"a"],["x",1,"b"]]}')).toEqual({ tokens: 3, updatedAt: 5, leases: [[5, 1, 'a']] });
    expect(parseBucket('{"tokens":"many","updatedAt":5}')).toBeUndefined();
    expect(parseBucket('not json')).toBeUndefined();
  });
});
