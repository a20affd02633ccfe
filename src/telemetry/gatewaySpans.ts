/**
 * The app's own span objects, handed to the SDK's span processors and exporters as the SDK's
 * would be. The SDK's Tracer and Span validate, sanitise and limit every attribute, measure
 * time twice and copy contexts for any caller; the app's spans are made by this file alone,
 * with attribute names and values the app chose, so they need none of it. That work was most of
 * what a traced GET cost (bench `telemetry`), about 20 µs a call for two spans.
 *
 * What stays the SDK's: the sampler (parent-based, ratio), the id generator, the resource, the
 * batch processor and the exporters, all given to this tracer as they are to the SDK's, so a
 * span is sampled, batched and encoded the same way. Parent contexts come from the W3C
 * propagator, which checks them, or from these spans, whose ids are valid as made.
 */
import {
  INVALID_SPANID,
  INVALID_TRACEID,
  SamplingDecision,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type AttributeValue,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, ReadableSpan, Sampler, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

export interface TracerParts {
  resource: Resource;
  scope: InstrumentationScope;
  sampler: Sampler;
  ids: IdGenerator;
  processors: SpanProcessor[];
}

/** Milliseconds since the epoch as OpenTelemetry's `[seconds, nanoseconds]`. */
function hrTimeOf(epochMs: number): HrTime {
  const seconds = Math.trunc(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
}

/** Wall-clock milliseconds of a time input (the app passes none; the interface allows them). */
function epochMsOf(time: TimeInput): number {
  if (typeof time === 'number') return time;
  if (time instanceof Date) return time.getTime();
  return time[0] * 1000 + time[1] / 1e6;
}

const noLinks: Link[] = [];
const noEvents: TimedEvent[] = [];
const unset: SpanStatus = { code: SpanStatusCode.UNSET };

/**
 * A span as few objects as it can be: the batch processor holds every ended span until it
 * exports them (up to thousands), long enough for the collector to move them to the old
 * generation, so each object a span holds costs again there. Times are kept as numbers and
 * given as `[seconds, nanoseconds]` only when the exporter reads them; no links, events or
 * status of its own until one is set.
 */
export class GatewaySpan implements Span, ReadableSpan {
  links = noLinks;
  events = noEvents;
  status = unset;
  ended = false;
  // Plain fields, not #private: the error-keeping processor hands on Object.create(span), whose
  // getters below run against it.
  private readonly startEpochMs = Date.now();
  // The duration from the monotonic clock: the wall clock may be set back while a span is open.
  private readonly startMonotonicMs = performance.now();
  private endEpochMs = 0;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    readonly attributes: Attributes,
    links: Link[] | undefined,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    private readonly parts: TracerParts,
  ) {
    if (links && links.length > 0) this.links = links;
  }

  // What every span of the tracer shares is read from it, not held by each span.
  get resource(): Resource {
    return this.parts.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.parts.scope;
  }

  // Nothing is dropped: the app's spans have no limits to meet.
  get droppedAttributesCount(): number {
    return 0;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }

  get startTime(): HrTime {
    return hrTimeOf(this.startEpochMs);
  }

  get endTime(): HrTime {
    return this.ended ? hrTimeOf(this.endEpochMs) : [0, 0];
  }

  get duration(): HrTime {
    return this.ended ? hrTimeOf(this.endEpochMs - this.startEpochMs) : [-1, -1];
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (!this.ended && value !== undefined && value !== null) this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined) this.setAttribute(key, value);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const isTime = typeof attributesOrTime === 'number' || attributesOrTime instanceof Date || Array.isArray(attributesOrTime);
    const attributes = isTime ? {} : { ...(attributesOrTime as Attributes | undefined) };
    const at = time ?? (isTime ? (attributesOrTime as TimeInput) : Date.now());
    this.events = [...this.events, { name, attributes, time: hrTimeOf(epochMsOf(at)), droppedAttributesCount: 0 }];
    return this;
  }

  addLink(link: Link): this {
    if (!this.ended) this.links = [...this.links, link];
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    // As the specification asks: OK is final, UNSET changes nothing.
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === 'string' ? { code: status.code, message: status.message } : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) (this as { name: string }).name = name;
    return this;
  }

  recordException(exception: unknown, time?: TimeInput): void {
    const error = exception as { name?: unknown; message?: unknown } | undefined;
    this.addEvent('exception', { 'exception.type': String(error?.name ?? typeof exception), 'exception.message': String(error?.message ?? exception) }, time);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.endEpochMs = endTime === undefined ? this.startEpochMs + (performance.now() - this.startMonotonicMs) : Math.max(this.startEpochMs, epochMsOf(endTime));
    this.ended = true;
    for (const processor of this.parts.processors) processor.onEnd(this);
  }
}

/** Makes the app's spans: sampled by the SDK's sampler, ended into the SDK's processors. */
export class GatewayTracer {
  constructor(private readonly parts: TracerParts) {}

  /** A span under `parent`'s span (a new trace when it has none); `attributes` is kept as given, not copied. */
  startSpan(name: string, kind: SpanKind, parent: Context, attributes: Attributes, links?: Link[]): Span {
    const { sampler, ids, processors } = this.parts;
    const parentSpanContext = parentSpanContextOf(parent);
    const traceId = parentSpanContext?.traceId ?? ids.generateTraceId();
    const spanId = ids.generateSpanId();
    const sampling = sampler.shouldSample(parent, traceId, name, kind, attributes, links ?? []);
    const traceFlags = sampling.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const spanContext: SpanContext = { traceId, spanId, traceFlags, traceState: sampling.traceState ?? parentSpanContext?.traceState };
    // Not recorded: its context is still propagated (a child, a `traceparent`), as the SDK does.
    if (sampling.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    if (sampling.attributes) Object.assign(attributes, sampling.attributes);
    const span = new GatewaySpan(name, kind, attributes, links, spanContext, parentSpanContext, this.parts);
    for (const processor of processors) processor.onStart(span, parent);
    return span;
  }
}

/**
 * The span context a new span is the child of, or undefined for a new trace. Only an all-zero
 * context (the API's placeholder for "no span") is refused here: the W3C propagator checks what
 * it extracts, and spans made here or by the SDK carry valid ids.
 */
export function parentSpanContextOf(parent: Context): SpanContext | undefined {
  const spanContext = trace.getSpanContext(parent);
  return spanContext && spanContext.traceId !== INVALID_TRACEID && spanContext.spanId !== INVALID_SPANID ? spanContext : undefined;
}

/** A span context as a W3C `traceparent` value (version 00). */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & TraceFlags.SAMPLED).toString(16)}`;
}
