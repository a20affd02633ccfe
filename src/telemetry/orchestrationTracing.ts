/**
 * One trace per long-running operation. The start's trace context is stored in the
 * orchestration's document; every poll, made later by the timer on any instance (after a
 * restart too), is a span linked to it, as a message's consumer links to its producer; so is
 * each notification delivery, whose CloudEvent carries the start's `traceparent` (the
 * CloudEvents distributed tracing extension) and whose request carries its own span's.
 */
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { recordNotificationAttempt, recordPollLag } from './metrics';
import { inSpan, linksTo, withOperation } from './spans';
import type { TraceCarrier } from './traceCarrier';

interface TracedState {
  id: string;
  name: string;
  traceContext?: TraceCarrier;
  poll?: { nextPollAt: number; pollCount: number };
}

/** One poll of an orchestration, made at `now`: a span linked to the start, and its lag. */
export function tracePoll<T>(state: TracedState, now: number, work: () => Promise<T>): Promise<T> {
  if (state.poll) recordPollLag(state.name, now - state.poll.nextPollAt);
  const attributes = { 'gateway.orchestration.id': state.id, 'gateway.operation': state.name, 'gateway.orchestration.poll_count': state.poll?.pollCount ?? 0 };
  return inSpan(`poll ${state.name}`, { kind: SpanKind.CONSUMER, attributes, links: linksTo(state.traceContext) }, () => withOperation(state.name, work));
}

/**
 * One notification delivery: a producer span linked to the start (from the event's own
 * `traceparent`), whose context goes in the request's `traceparent`/`tracestate` headers.
 * The target is recorded by its origin only: a webhook URL often carries its own secret.
 */
export async function traceNotification<T extends { delivered: boolean; error?: string }>(
  target: string,
  event: { id: string; type: string; traceparent?: string; tracestate?: string },
  send: (traceHeaders: Record<string, string>) => Promise<T>,
): Promise<T> {
  const url = new URL(target);
  const attributes = {
    'server.address': url.hostname,
    'url.scheme': url.protocol.replace(':', ''),
    'cloudevents.event_id': event.id,
    'cloudevents.event_type': event.type,
  };
  const links = linksTo(event.traceparent ? { traceparent: event.traceparent, tracestate: event.tracestate } : undefined);
  return inSpan(`notify ${event.type}`, { kind: SpanKind.PRODUCER, attributes, links }, async (span) => {
    const traceHeaders: Record<string, string> = {};
    propagation.inject(context.active(), traceHeaders);
    const outcome = await send(traceHeaders);
    span.setAttribute('gateway.notification.delivered', outcome.delivered);
    if (!outcome.delivered) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    recordNotificationAttempt(outcome.delivered);
    return outcome;
  });
}
