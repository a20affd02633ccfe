/** The outbox rules as tables: what is due, and what one attempt leads to. */
import {
  afterAttempt,
  deliveryView,
  droppedDelivery,
  dueDeliveries,
  isTargetAllowed,
  outboxHint,
  nextDeliveryAt,
  openOutbox,
  type Delivery,
  type DeliveryOutcome,
} from '../../../src/orchestration/outbox';

const policy = { maxAttempts: 4, firstRetryMs: 1000, maxRetryMs: 3000, claimMs: 500 };
const now = 1_000_000;
const pending = (fields: Partial<Delivery> = {}): Delivery => ({
  target: 'https://hooks.example.com/a/secret-path?key=k',
  eventId: 'e1',
  state: 'pending',
  attempts: 0,
  nextAttemptAt: now,
  ...fields,
});

describe('openOutbox', () => {
  it('opens one pending delivery per distinct target, each with its own event id', () => {
    let next = 0;
    const deliveries = openOutbox(['https://a/1', 'https://b/2', 'https://a/1'], () => `id-${(next += 1)}`, now);
    expect(deliveries).toEqual([
      { target: 'https://a/1', eventId: 'id-1', state: 'pending', attempts: 0, nextAttemptAt: now },
      { target: 'https://b/2', eventId: 'id-2', state: 'pending', attempts: 0, nextAttemptAt: now },
    ]);
  });
});

describe('dueDeliveries and nextDeliveryAt', () => {
  it.each<[string, Delivery, boolean]>([
    ['pending and due', pending(), true],
    ['pending, later', pending({ nextAttemptAt: now + 1 }), false],
    ['held by another attempt', pending({ claimedUntil: now + 1 }), false],
    ['a claim that lapsed', pending({ claimedUntil: now - 1 }), true],
    ['delivered', pending({ state: 'delivered' }), false],
    ['given up', pending({ state: 'failed' }), false],
  ])('%s: due %s', (_title, delivery, due) => {
    expect(dueDeliveries([delivery], now)).toHaveLength(due ? 1 : 0);
  });

  it('is next due at the earliest pending time, claims included; never when none is pending', () => {
    expect(
      nextDeliveryAt([pending({ nextAttemptAt: now + 5 }), pending({ nextAttemptAt: now + 2, claimedUntil: now + 9 }), pending({ state: 'delivered' })]),
    ).toBe(now + 5);
    expect(nextDeliveryAt([pending({ state: 'failed' })])).toBeUndefined();
    expect(nextDeliveryAt(undefined)).toBeUndefined();
  });
});

describe('afterAttempt', () => {
  it.each<[string, Delivery, DeliveryOutcome, Partial<Delivery>]>([
    ['delivered', pending({ claimedUntil: now + 500 }), { delivered: true }, { state: 'delivered', attempts: 1, nextAttemptAt: undefined }],
    [
      'a first failure waits the first retry',
      pending(),
      { delivered: false, retriable: true, error: 'HTTP 503' },
      { state: 'pending', attempts: 1, nextAttemptAt: now + 1000, lastError: 'HTTP 503' },
    ],
    [
      'then twice as long',
      pending({ attempts: 1 }),
      { delivered: false, retriable: true, error: 'timeout' },
      { state: 'pending', attempts: 2, nextAttemptAt: now + 2000 },
    ],
    ['capped', pending({ attempts: 2 }), { delivered: false, retriable: true, error: 'timeout' }, { state: 'pending', attempts: 3, nextAttemptAt: now + 3000 }],
    [
      'until the last attempt',
      pending({ attempts: 3 }),
      { delivered: false, retriable: true, error: 'timeout' },
      { state: 'failed', attempts: 4, nextAttemptAt: undefined },
    ],
    ['a refusal is final', pending(), { delivered: false, retriable: false, error: 'HTTP 400' }, { state: 'failed', attempts: 1, lastError: 'HTTP 400' }],
  ])('%s', (_title, delivery, outcome, expected) => {
    const after = afterAttempt(delivery, outcome, now, policy);
    expect(after).toMatchObject(expected);
    // The attempt is over: its claim goes with it.
    expect(after).not.toHaveProperty('claimedUntil');
  });

  it('keeps a long error short', () => {
    expect(afterAttempt(pending(), { delivered: false, retriable: true, error: 'x'.repeat(5000) }, now, policy).lastError).toHaveLength(200);
  });
});

it('shows a delivery by its target origin only: a webhook URL often carries a secret', () => {
  expect(deliveryView(pending({ lastError: 'HTTP 503', attempts: 1, nextAttemptAt: now }))).toEqual({
    targetOrigin: 'https://hooks.example.com',
    eventId: 'e1',
    state: 'pending',
    attempts: 1,
    nextAttemptTime: new Date(now).toISOString(),
    lastError: 'HTTP 503',
    deliveredTime: null,
  });
});

describe('isTargetAllowed and droppedDelivery', () => {
  it.each<[string, string[], string | undefined, boolean]>([
    ['an allowed origin', ['https://hooks.example.com'], undefined, true],
    ['an origin removed from the list', ['https://other.example.com'], undefined, false],
    ['the same host on another port', ['https://hooks.example.com:8443'], undefined, false],
    ["NOTIFY_URL's origin, listed or not", [], 'https://hooks.example.com/ops?key=k2', true],
  ])('%s', (_title, allowed, notifyUrl, expected) => {
    expect(isTargetAllowed(pending().target, allowed, notifyUrl)).toBe(expected);
  });

  it('drops without an attempt, final, saying why', () => {
    const dropped = droppedDelivery(pending({ attempts: 1, claimedUntil: now + 500 }), 'origin no longer allowed');
    expect(dropped).toEqual({
      target: pending().target,
      eventId: 'e1',
      state: 'dropped',
      attempts: 1,
      nextAttemptAt: undefined,
      lastError: 'origin no longer allowed',
    });
    expect(nextDeliveryAt([dropped])).toBeUndefined();
    expect(deliveryView(dropped)).toMatchObject({ state: 'dropped', nextAttemptTime: null, lastError: 'origin no longer allowed' });
  });
});

describe('outboxHint', () => {
  it('says whether a pending delivery awaits its first attempt, and the pending origins, never a path', () => {
    const deliveries = [
      pending({ attempts: 2, target: 'https://a.example.com/x?key=k' }),
      pending({ state: 'delivered', attempts: 0, target: 'https://done.example.com/y' }),
      pending({ attempts: 1, target: 'https://a.example.com/z' }),
    ];
    expect(outboxHint(deliveries)).toEqual({ fresh: false, origins: ['https://a.example.com'] });
    expect(outboxHint([...deliveries, pending({ target: 'https://xn--fsq.example/h' })])).toEqual({
      fresh: true,
      origins: ['https://a.example.com', 'https://xn--fsq.example'],
    });
  });
});
