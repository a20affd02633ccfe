/**
 * The notification outbox of an orchestration, as pure rules: one delivery per target, opened
 * when the orchestration ends, retried with back-off up to a bound, and kept in the
 * orchestration's own document so a crash or another instance resumes it (at least once: a
 * delivery whose answer was lost is sent again, with the same event id for the receiver to
 * drop it). Sending is elsewhere (notificationSender.ts); nothing here does I/O.
 */

export interface Delivery {
  /** The full URL; never shown or logged (a webhook URL often carries its own secret). */
  target: string;
  /** The CloudEvent id, the same on every attempt (Standard Webhooks' `webhook-id`). */
  eventId: string;
  /** `dropped`: given up without an attempt, its origin no longer allowed (see `droppedDelivery`). */
  state: 'pending' | 'delivered' | 'failed' | 'dropped';
  attempts: number;
  /** When the next attempt may be made (ms since the epoch), while pending. */
  nextAttemptAt?: number;
  /** Until when an instance holds the attempt in flight. */
  claimedUntil?: number;
  /** What the last failed attempt met (`HTTP 503`, `timeout`, `ECONNREFUSED`), or why it was dropped. */
  lastError?: string;
  deliveredAt?: string;
}

export interface OutboxPolicy {
  maxAttempts: number;
  /** Wait after the first failed attempt; doubled after each further one. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** How long an instance holds attempts it is making. */
  claimMs: number;
}

export type DeliveryOutcome = { delivered: true } | { delivered: false; retriable: boolean; error: string };

export function openOutbox(targets: readonly string[], newId: () => string, now: number): Delivery[] {
  return [...new Set(targets)].map((target) => ({ target, eventId: newId(), state: 'pending', attempts: 0, nextAttemptAt: now }));
}

/** The deliveries to attempt now: pending, due, and not held by another attempt. */
export function dueDeliveries(deliveries: readonly Delivery[] | undefined, now: number): Delivery[] {
  return (deliveries ?? []).filter((delivery) => delivery.state === 'pending' && (delivery.nextAttemptAt ?? 0) <= now && (delivery.claimedUntil ?? 0) <= now);
}

/** When the outbox next needs attention, or undefined when nothing is pending. */
export function nextDeliveryAt(deliveries: readonly Delivery[] | undefined): number | undefined {
  const pending = (deliveries ?? []).filter((delivery) => delivery.state === 'pending');
  if (pending.length === 0) return undefined;
  return Math.min(...pending.map((delivery) => Math.max(delivery.nextAttemptAt ?? 0, delivery.claimedUntil ?? 0)));
}

/** What an outbox's index marker tells before its document is read (see OrchestrationIndex). */
export interface OutboxHint {
  /** A delivery awaits its first attempt: first attempts go before retries. */
  fresh: boolean;
  /** The origins of the pending deliveries. */
  origins: string[];
}

export function outboxHint(deliveries: readonly Delivery[] | undefined): OutboxHint {
  const pending = (deliveries ?? []).filter((delivery) => delivery.state === 'pending');
  return { fresh: pending.some((delivery) => delivery.attempts === 0), origins: [...new Set(pending.map((delivery) => new URL(delivery.target).origin))] };
}

export function claimDeliveries(deliveries: readonly Delivery[], eventIds: ReadonlySet<string>, until: number): Delivery[] {
  return deliveries.map((delivery) => (eventIds.has(delivery.eventId) ? { ...delivery, claimedUntil: until } : delivery));
}

/** The delivery after one attempt: delivered, retried after a back-off, or given up. */
export function afterAttempt(delivery: Delivery, outcome: DeliveryOutcome, now: number, policy: OutboxPolicy): Delivery {
  const attempts = delivery.attempts + 1;
  const { claimedUntil: _released, ...rest } = delivery;
  if (outcome.delivered) return { ...rest, state: 'delivered', attempts, nextAttemptAt: undefined, deliveredAt: new Date(now).toISOString() };
  const error = outcome.error.slice(0, 200);
  if (!outcome.retriable || attempts >= policy.maxAttempts) return { ...rest, state: 'failed', attempts, nextAttemptAt: undefined, lastError: error };
  const wait = Math.min(policy.maxRetryMs, policy.firstRetryMs * 2 ** (attempts - 1));
  return { ...rest, attempts, nextAttemptAt: now + wait, lastError: error };
}

/** Why a delivery is dropped when its origin left the allow-list after its orchestration started. */
export const droppedReason = 'origin no longer allowed';

/**
 * Whether a delivery may still go to `target`: its origin is one the deployment allows now
 * (`NOTIFY_ALLOWED_ORIGINS`, or `NOTIFY_URL`'s, which the operator set). An origin removed
 * from the list is revoked for deliveries already opened too, not only for new starts.
 */
export function isTargetAllowed(target: string, allowedOrigins: readonly string[], notifyUrl: string | undefined): boolean {
  const origin = new URL(target).origin;
  return allowedOrigins.includes(origin) || (notifyUrl !== undefined && new URL(notifyUrl).origin === origin);
}

/** A delivery given up without an attempt (nothing is sent), saying why. */
export function droppedDelivery(delivery: Delivery, reason: string): Delivery {
  const { claimedUntil: _released, ...rest } = delivery;
  return { ...rest, state: 'dropped', nextAttemptAt: undefined, lastError: reason };
}

/** What a status document shows of a delivery: its state, never the target's path or query. */
export function deliveryView(delivery: Delivery) {
  return {
    targetOrigin: new URL(delivery.target).origin,
    eventId: delivery.eventId,
    state: delivery.state,
    attempts: delivery.attempts,
    nextAttemptTime: delivery.state === 'pending' && delivery.nextAttemptAt !== undefined ? new Date(delivery.nextAttemptAt).toISOString() : null,
    lastError: delivery.lastError ?? null,
    deliveredTime: delivery.deliveredAt ?? null,
  };
}
