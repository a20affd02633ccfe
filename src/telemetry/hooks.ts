/**
 * What the app calls to be traced and measured. Each hook does its work as it is and nothing
 * else when nothing is exported; only then does it reach the instrumentation, which is part of
 * the SDK's own file (src/telemetry/exportSdk.ts, loaded only when an exporter is configured).
 * So neither `@opentelemetry/api` nor any code of the spans and metrics is in the bundle a
 * process starts with, and a process without an exporter pays a test per hook.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import type { Instrumentation } from './exportSdk';
import type { AttemptFacts, CallTrace } from './callTrace';
import { carrierOf, type TraceCarrier } from './traceCarrier';

export type { AttemptFacts, CallTrace } from './callTrace';
import { instrumentation } from './telemetry';

type Handler<Rest extends unknown[]> = (request: HttpRequest, context: InvocationContext, ...rest: Rest) => Promise<HttpResponseInit>;

/**
 * The span of an incoming call, its parent the host's `context.traceContext`. With `passTrace`,
 * the span's context is not made the async context: the handler takes it with `callTraceOf` and
 * hands it to its upstream requests (UpstreamRequest.callTrace), and runs what cannot take it
 * by hand (storage calls) within `inCallTrace`.
 */
export function traceIncoming<Rest extends unknown[]>(operation: string, handler: Handler<Rest>, options: { passTrace?: boolean } = {}): Handler<Rest> {
  // Wrapped once per instrumentation, not per call: the wrapper holds what is the same on every call.
  let tracedBy: Instrumentation | undefined;
  let traced: Handler<Rest> = handler;
  return (request, context, ...rest) => {
    const current = instrumentation();
    if (!current) return handler(request, context, ...rest);
    if (tracedBy !== current) {
      traced = current.traceIncoming(operation, handler, options);
      tracedBy = current;
    }
    return traced(request, context, ...rest);
  };
}

/** The upstream's request ids on the incoming call's span (`callTrace`'s, else the active one). */
export function recordUpstreamIdsOnCall(headers: Record<string, string> | undefined, callTrace?: CallTrace): void {
  instrumentation()?.recordUpstreamIdsOnCall(headers, callTrace);
}

/** The trace of an incoming call traced with `passTrace`; undefined when nothing is exported. */
export function callTraceOf(invocation: InvocationContext): CallTrace | undefined {
  return instrumentation()?.callTraceOf(invocation);
}

/** Runs `work` within an incoming call's trace (its storage calls' spans are the call's children). */
export function inCallTrace<T>(callTrace: CallTrace | undefined, work: () => Promise<T>): Promise<T> {
  const traced = instrumentation();
  return traced && callTrace ? traced.inCallTrace(callTrace, work) : work();
}

/**
 * Runs `work` as a call of the documented `operation` within the active trace (a chat command's
 * migration or usage read): its upstream attempts are counted under that operation.
 */
export function inOperation<T>(operation: string, work: () => Promise<T>): Promise<T> {
  const traced = instrumentation();
  return traced ? traced.withOperation(operation, work) : work();
}

/** One upstream attempt: `send` gets the headers to send (with `traceparent` when exported). */
export function traceUpstreamAttempt<T extends { status: number; headers: Record<string, string> }>(
  facts: AttemptFacts,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const traced = instrumentation();
  return traced ? traced.traceUpstreamAttempt(facts, headers, send) : send(headers);
}

/** One storage call of a store (`area`). */
export function traceStorage<T>(area: string, operation: string, run: () => Promise<T>): Promise<T> {
  const traced = instrumentation();
  return traced ? traced.traceStorage(area, operation, run) : run();
}

/** The active trace context, to store with a long-running start; undefined when nothing is exported. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  return instrumentation()?.currentTraceCarrier();
}

/** One poll of an orchestration, linked to its start. */
export function tracePoll<T>(
  state: { id: string; name: string; traceContext?: TraceCarrier; poll?: { nextPollAt: number; pollCount: number } },
  now: number,
  work: () => Promise<T>,
): Promise<T> {
  const traced = instrumentation();
  return traced ? traced.tracePoll(state, now, work) : work();
}

/** One notification delivery: `send` gets the `traceparent`/`tracestate` headers to add (none when nothing is exported). */
export function traceNotification<T extends { delivered: boolean; error?: string }>(
  target: string,
  event: { id: string; type: string; traceparent?: string; tracestate?: string },
  send: (traceHeaders: Record<string, string>) => Promise<T>,
): Promise<T> {
  const traced = instrumentation();
  return traced ? traced.traceNotification(target, event, send) : send({});
}

export function recordOrchestrationEnd(state: { name: string; runtimeStatus: string; createdTime: string; endedTime?: string }): void {
  instrumentation()?.recordOrchestrationEnd(state);
}

export function recordCertificateExpiry(environment: { projectId: number; environmentId: string }, expiresAt: string | undefined): void {
  instrumentation()?.recordCertificateExpiry(environment, expiresAt);
}

/** The CloudEvents distributed tracing extension of an orchestration's end event: the start's context. */
export function cloudEventTracing(state: { traceContext?: TraceCarrier }): Partial<TraceCarrier> {
  const carrier = state.traceContext;
  if (!carrier) return {};
  return carrierOf(carrier.traceparent, carrier.tracestate);
}
