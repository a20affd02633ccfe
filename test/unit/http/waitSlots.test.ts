import { GatewayError } from '../../../src/errors';
import { WaitSlots } from '../../../src/http/waitSlots';

function refusal(take: () => unknown): GatewayError {
  try {
    take();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('the wait was not refused');
}

describe('WaitSlots', () => {
  const now = 1_000_000;

  it('refuses a caller past its own bound, with Retry-After when its first wait runs out', () => {
    const slots = new WaitSlots({ perCaller: 2, perInstance: 10 });
    slots.take('key:a', now + 30_000, now);
    slots.take('key:a', now + 4_200, now);
    const error = refusal(() => slots.take('key:a', now + 60_000, now));
    expect(error).toMatchObject({ code: 'TooManyWaits', status: 429, target: 'gateway-wait', headers: { 'retry-after': '5' } });
    expect(error.message).toContain('GATEWAY_WAIT_MAX_PER_CALLER');
    // Another caller is held to its own bound only.
    expect(() => slots.take('key:b', now + 1000, now)).not.toThrow();
  });

  it('refuses any caller past the instance bound, and frees a slot once, when its wait ends', () => {
    const slots = new WaitSlots({ perCaller: 5, perInstance: 2 });
    const release = slots.take('key:a', now + 500, now);
    slots.take('key:b', now + 9_000, now);
    const error = refusal(() => slots.take('key:c', now + 1000, now));
    expect(error).toMatchObject({ code: 'TooManyWaits', headers: { 'retry-after': '1' } });
    expect(error.message).toContain('GATEWAY_WAIT_MAX_PER_INSTANCE');
    release();
    release();
    expect(slots.held).toBe(1);
    slots.take('key:c', now + 1000, now);
    expect(() => slots.take('key:d', now + 1000, now)).toThrow(GatewayError);
  });
});
