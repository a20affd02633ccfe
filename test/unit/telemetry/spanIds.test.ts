/** The trace and span ids the SDK is given: W3C's shape, never all zeros, never repeated across pool refills. */
import { PooledRandomIds } from '../../../src/telemetry/spanIds';

describe('PooledRandomIds', () => {
  it('gives 32 and 16 lower-case hex digits, not all zeros, all different over several pools', () => {
    const ids = new PooledRandomIds();
    const seen = new Set<string>();
    // 4,096 bytes a pool: 3,000 of each id (72,000 bytes) refill it 17 times.
    for (let index = 0; index < 3000; index += 1) {
      const traceId = ids.generateTraceId();
      const spanId = ids.generateSpanId();
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(traceId).not.toBe('0'.repeat(32));
      expect(spanId).not.toBe('0'.repeat(16));
      seen.add(traceId).add(spanId);
    }
    expect(seen.size).toBe(6000);
  });
});
