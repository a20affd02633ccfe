/**
 * The spans the app makes: the incoming call, each upstream attempt, each storage call. Part of
 * the SDK's file (loaded only when an exporter is configured); the app calls them through
 * src/telemetry/hooks.ts, which does nothing else when nothing is exported.
 *
 * Attributes name what was done, never with what: no header value but the upstream's request
 * ids, no body, and URLs with every query value but `api-version` replaced.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { ChainedContext } from './chainedContext';
import { traceparentOf, type GatewayTracer } from './gatewaySpans';
import { recordRefusal, recordUpstreamAttempt } from './metrics';
import { upstreamIdsOf, type UpstreamIds } from './upstreamIds';
import type { AttemptFacts, CallTrace } from './callTrace';
import { carrierOf, type TraceCarrier } from './traceCarrier';

let tracer: GatewayTracer;

/** The tracer the spans below are made by; set when export starts (src/telemetry/exportSdk.ts). */
export function useTracer(made: GatewayTracer): void {
  tracer = made;
}
/** The operation a piece of work is done for (the upstream call metric's `operation`). */
const operationKey = createContextKey('gateway.operation');

/** The active span's context as `traceparent`/`tracestate`, or undefined when there is none. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : undefined;
}

/** A link to the span a stored context names (a poll to its start), or none. */
export function linksTo(carrier: TraceCarrier | undefined): Link[] {
  if (!carrier) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
  return spanContext ? [{ context: spanContext }] : [];
}

/** Marks a span failed with the error's code. */
function failSpan(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as { code?: string } | undefined)?.code ?? 'failed' });
}

/**
 * Runs `work` in a new span, ending it (in error if `work` throws) when `work` settles. Chained
 * rather than awaited: on Node 20 every promise an async wrapper adds is seen by the context's
 * async hooks, on every call.
 */
export function inSpan<T>(
  name: string,
  options: { kind: SpanKind; attributes?: Attributes; links?: Link[]; parent?: Context; passed?: boolean },
  work: (span: Span, spanContext: Context) => Promise<T>,
  recordResult?: (span: Span, result: T) => void,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(name, options.kind, parent, options.attributes ?? {}, options.links);
  const spanContext = trace.setSpan(parent, span);
  let working: Promise<T>;
  try {
    // `passed`: the work hands the span's context on itself, so it is not made the async context's.
    working = options.passed ? work(span, spanContext) : context.with(spanContext, work, undefined, span, spanContext);
  } catch (error) {
    working = Promise.reject(error as Error);
  }
  return working.then(
    (result) => {
      recordResult?.(span, result);
      span.end();
      return result;
    },
    (error: unknown) => {
      failSpan(span, error);
      span.end();
      throw error;
    },
  );
}

/**
 * The same answer marks the attempt's span and then the incoming call's: the last headers read
 * are remembered with their ids (src/telemetry/upstreamIds.ts), so they are checked once.
 */
function idsOfAnswer(headers: Record<string, string>): UpstreamIds | undefined {
  if (headers !== lastIdHeaders) {
    lastIdHeaders = headers;
    lastIds = upstreamIdsOf(headers);
  }
  return lastIds;
}
let lastIdHeaders: Record<string, string> | undefined;
let lastIds: UpstreamIds | undefined;

/** Marks a span with the upstream's request ids, when the answer has them. */
function setUpstreamIds(span: Span, headers: Record<string, string>): void {
  const ids = idsOfAnswer(headers);
  if (ids?.requestId) span.setAttribute('az.service_request_id', ids.requestId);
  if (ids?.correlationRequestId) span.setAttribute('gateway.upstream.correlation_request_id', ids.correlationRequestId);
}

/** Marks the incoming call's span (`callTrace`'s, else the active one) with the upstream's request ids. */
export function recordUpstreamIdsOnCall(headers: Record<string, string> | undefined, callTrace?: CallTrace): void {
  if (!headers) return;
  const span = callTrace ? trace.getSpan(callTrace as Context) : trace.getActiveSpan();
  if (span) setUpstreamIds(span, headers);
}

/**
 * The incoming calls whose handlers take their trace by hand (`callTraceOf`) rather than from
 * the async context: on Node 20 and 22 an async context, once entered, runs a hook for every
 * promise of the process (and turns off V8's fast `await`), which cost a GET more than all its
 * spans. Each call's context is kept on its invocation, under a key of this file's: a WeakMap
 * entry cost ten times as much to set and read (0.2–0.4 µs against 0.02), and more to collect.
 */
const callTraceKey = Symbol('gateway.callTrace');
type WithCallTrace = InvocationContext & { [callTraceKey]?: Context };

/** The trace of an incoming call made with `passTrace`, to hand to its upstream requests. */
export function callTraceOf(invocation: InvocationContext): CallTrace | undefined {
  return (invocation as WithCallTrace)[callTraceKey];
}

/** Runs `work` with `callTrace` as the async context: for work that cannot take it by hand (storage calls). */
export function inCallTrace<T>(callTrace: CallTrace, work: () => Promise<T>): Promise<T> {
  return context.with(callTrace as Context, work);
}

type Handler<Rest extends unknown[]> = (request: HttpRequest, context: InvocationContext, ...rest: Rest) => Promise<HttpResponseInit>;

/**
 * The span of an incoming call. Its parent is the trace context the Functions host hands the
 * invocation (`context.traceContext`, from the caller's `traceparent`), else the request's own.
 */
export function traceIncoming<Rest extends unknown[]>(
  operation: string,
  handler: Handler<Rest>,
  { passTrace = false }: { passTrace?: boolean } = {},
): Handler<Rest> {
  // What is the same on every call is made once: the context of a call without a parent, the span's name by method.
  const withoutParent = new ChainedContext(ROOT_CONTEXT, operationKey, operation);
  const names: Record<string, string> = {};
  return (request, invocation, ...rest) => {
    const traceparent = invocation.traceContext?.traceParent ?? request.headers.get('traceparent') ?? undefined;
    const parent = traceparent
      ? new ChainedContext(
          propagation.extract(ROOT_CONTEXT, carrierOf(traceparent, invocation.traceContext?.traceState ?? request.headers.get('tracestate'))),
          operationKey,
          operation,
        )
      : withoutParent;
    const method = request.method;
    const attributes = { 'http.request.method': method, 'url.path': pathOf(request.url), 'http.route': operation, 'gateway.operation': operation };
    return inSpan(
      (names[method] ??= `${method} ${operation}`),
      { kind: SpanKind.SERVER, attributes, parent, passed: passTrace },
      (_span, spanContext) => {
        if (passTrace) (invocation as WithCallTrace)[callTraceKey] = spanContext;
        return handler(request, invocation, ...rest);
      },
      recordResponse,
    );
  };

  function recordResponse(span: Span, response: HttpResponseInit): void {
    const status = response.status ?? 200;
    span.setAttribute('http.response.status_code', status);
    const correlationId = (response.headers as Record<string, string> | undefined)?.['x-correlation-id'];
    if (correlationId) span.setAttribute('gateway.correlation_id', correlationId);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (status === 403 || status === 429) recordRefusal(operation, response);
  }
}

/** Runs `work` as an orchestration step for `operation` (a poll): its upstream calls are counted under it. */
export function withOperation<T>(operation: string, work: () => T): T {
  return context.with(context.active().setValue(operationKey, operation), work);
}

// Read from the strings as the app built them: parsing a URL again costs more per call than a span.
/** The path of an absolute URL, without its query. */
function pathOf(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(url)?.[1] || '/';
}

/** The host of an origin (`https://host:port`). */
function hostOf(origin: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/(\[[^\]]*\]|[^:/]*)/i.exec(origin)?.[1] ?? origin;
}

/** The URL as recorded: every query value but `api-version` replaced, so no signature or token in a link leaks. */
export function recordedUrlOf(origin: string, pathAndQuery: string): string {
  const queryAt = pathAndQuery.indexOf('?');
  if (queryAt < 0) return origin + pathAndQuery;
  // Most calls carry `api-version` alone: nothing to replace, nothing to split.
  if (pathAndQuery.indexOf('&', queryAt) < 0 && apiVersionFirst.test(pathAndQuery.slice(queryAt + 1, queryAt + 13))) return origin + pathAndQuery;
  const pairs = pathAndQuery
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return name.toLowerCase() === 'api-version' ? pair : `${name}=REDACTED`;
    });
  return `${origin}${pathAndQuery.slice(0, queryAt)}?${pairs.join('&')}`;
}
const apiVersionFirst = /^api-version=$/i;

/** One upstream attempt: a client span, `traceparent`/`tracestate` added to its headers. */
export function traceUpstreamAttempt<T extends { status: number; headers: Record<string, string> }>(
  facts: AttemptFacts,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const parent = (facts.callTrace as Context | undefined) ?? context.active();
  const operation = String(parent.getValue(operationKey) ?? 'unknown');
  const attributes: Attributes = {
    'http.request.method': facts.method,
    'url.full': recordedUrlOf(facts.origin, facts.path),
    'server.address': hostOf(facts.origin),
    'http.request.resend_count': facts.attempt,
  };
  // Only on a retry: the first attempt waits for nothing.
  if (facts.waitedMs > 0) attributes['gateway.retry.waited_ms'] = facts.waitedMs;
  // A leaf: nothing runs within it but the request, so its context is passed to the headers
  // only, not made active (entering a context costs more than the rest of the span on Node 20).
  const span = tracer.startSpan(facts.method, SpanKind.CLIENT, parent, attributes);
  const sent: Record<string, string> = { ...headers, traceparent: traceparentOf(span.spanContext()) };
  const tracestate = span.spanContext().traceState?.serialize();
  if (tracestate) sent.tracestate = tracestate;
  let sending: Promise<T>;
  try {
    sending = send(sent);
  } catch (error) {
    sending = Promise.reject(error as Error);
  }
  // Chained rather than awaited, as in inSpan.
  return sending.then(
    (response) => {
      span.setAttribute('http.response.status_code', response.status);
      setUpstreamIds(span, response.headers);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      recordUpstreamAttempt(operation, facts.attempt, response.status);
      return response;
    },
    (error: unknown) => {
      failSpan(span, error);
      span.end();
      recordUpstreamAttempt(operation, facts.attempt, undefined);
      throw error;
    },
  );
}

/**
 * One storage call: what it did (`operation`) and the kind of blob (`area`, the store that owns
 * it). A condition that failed (409, 412) or a blob not found is an answer, not a failure.
 * Only within traced work (a call, a poll): the poller's housekeeping, every few seconds on
 * every instance, would otherwise make a trace of each listing that found nothing to do.
 */
export async function traceStorage<T>(area: string, operation: string, run: () => Promise<T>): Promise<T> {
  if (!trace.getActiveSpan()) return run();
  const parent = context.active();
  const span = tracer.startSpan(`storage ${operation}`, SpanKind.CLIENT, parent, { 'gateway.storage.area': area, 'gateway.storage.operation': operation });
  try {
    const result = await context.with(trace.setSpan(parent, span), run);
    // The storage SDK's answers carry their HTTP status (`_response.status`); a page of a listing does not.
    const status = (result as { _response?: { status?: unknown } } | undefined)?._response?.status;
    if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
    return result;
  } catch (error) {
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
    if (typeof status !== 'number' || status >= 500) failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}
