/**
 * The app's own spans, as the SDK's processors and exporters read them: ids and parents, times,
 * the status rules, one end only, and the sampler's decision honoured.
 */
import { ROOT_CONTEXT, SamplingDecision, SpanKind, SpanStatusCode, trace, TraceFlags, INVALID_SPAN_CONTEXT, type SpanContext } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-base';
import { GatewaySpan, GatewayTracer, traceparentOf } from '../../../src/telemetry/gatewaySpans';
import { PooledRandomIds } from '../../../src/telemetry/spanIds';

const resource = resourceFromAttributes({ 'service.name': 'spans-test' });

function tracerWith(sampler: Sampler = new AlwaysOnSampler()) {
  const exporter = new InMemorySpanExporter();
  const tracer = new GatewayTracer({
    resource,
    scope: { name: 'management-gateway', version: '1.2.3' },
    sampler,
    ids: new PooledRandomIds(),
    processors: [new SimpleSpanProcessor(exporter)],
  });
  return { tracer, exported: () => exporter.getFinishedSpans() as ReadableSpan[] };
}

it('hands the processor a finished span with its parent, attributes, scope, resource and times', () => {
  const { tracer, exported } = tracerWith();
  const before = Date.now();
  const parent = tracer.startSpan('GET op', SpanKind.SERVER, ROOT_CONTEXT, { 'gateway.operation': 'op' });
  const child = tracer.startSpan('GET', SpanKind.CLIENT, trace.setSpan(ROOT_CONTEXT, parent), { 'http.request.method': 'GET' });
  child.setAttribute('http.response.status_code', 200);
  child.end();
  parent.end();
  const [childSpan, parentSpan] = exported();
  expect(exported()).toHaveLength(2);
  expect(childSpan!.spanContext().traceId).toBe(parentSpan!.spanContext().traceId);
  expect(childSpan!.parentSpanContext?.spanId).toBe(parentSpan!.spanContext().spanId);
  expect(parentSpan!.parentSpanContext).toBeUndefined();
  expect(childSpan).toMatchObject({
    name: 'GET',
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 },
    instrumentationScope: { name: 'management-gateway', version: '1.2.3' },
    ended: true,
    links: [],
    events: [],
  });
  expect(childSpan!.resource.attributes['service.name']).toBe('spans-test');
  expect(childSpan!.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
  const startMs = parentSpan!.startTime[0] * 1000 + parentSpan!.startTime[1] / 1e6;
  const endMs = parentSpan!.endTime[0] * 1000 + parentSpan!.endTime[1] / 1e6;
  expect(startMs).toBeGreaterThanOrEqual(before - 1);
  expect(endMs).toBeGreaterThanOrEqual(startMs);
  expect(endMs).toBeLessThanOrEqual(Date.now() + 1);
  expect(parentSpan!.duration[0]).toBeGreaterThanOrEqual(0);
  expect(parentSpan!.duration[1]).toBeGreaterThanOrEqual(0);
});

it('ends once, and changes nothing after its end', () => {
  const { tracer, exported } = tracerWith();
  const span = tracer.startSpan('x', SpanKind.INTERNAL, ROOT_CONTEXT, {});
  span.end();
  span.setAttribute('late', 1);
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'late' });
  span.end();
  expect(exported()).toHaveLength(1);
  expect(exported()[0]).toMatchObject({ attributes: {}, status: { code: SpanStatusCode.UNSET } });
  expect(span.isRecording()).toBe(false);
});

it('keeps an error message, and an OK status final, as the specification asks', () => {
  const { tracer, exported } = tracerWith();
  const failed = tracer.startSpan('failed', SpanKind.INTERNAL, ROOT_CONTEXT, {});
  failed.setStatus({ code: SpanStatusCode.ERROR, message: 'UpstreamTimeout' });
  failed.end();
  const ok = tracer.startSpan('ok', SpanKind.INTERNAL, ROOT_CONTEXT, {});
  ok.setStatus({ code: SpanStatusCode.OK });
  ok.setStatus({ code: SpanStatusCode.ERROR, message: 'after OK' });
  ok.end();
  expect(exported().map((span) => span.status)).toEqual([{ code: SpanStatusCode.ERROR, message: 'UpstreamTimeout' }, { code: SpanStatusCode.OK }]);
});

it('starts a new trace under the API placeholder for "no span" rather than a child of all-zero ids', () => {
  const { tracer } = tracerWith();
  const span = tracer.startSpan('x', SpanKind.SERVER, trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext(INVALID_SPAN_CONTEXT)), {});
  expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(span.spanContext().traceId).not.toBe(INVALID_SPAN_CONTEXT.traceId);
  expect((span as GatewaySpan).parentSpanContext).toBeUndefined();
});

it('follows a remote parent: its trace id, its trace state and, for the child, its span id', () => {
  const { tracer } = tracerWith();
  const remote: SpanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true };
  const span = tracer.startSpan('x', SpanKind.SERVER, trace.setSpanContext(ROOT_CONTEXT, remote), {}) as GatewaySpan;
  expect(span.spanContext().traceId).toBe(remote.traceId);
  expect(span.parentSpanContext).toBe(remote);
  expect(traceparentOf(span.spanContext())).toBe(`00-${remote.traceId}-${span.spanContext().spanId}-01`);
});

it('makes no span the sampler refuses, yet propagates its context', () => {
  const refuse: Sampler = { shouldSample: () => ({ decision: SamplingDecision.NOT_RECORD }), toString: () => 'refuse' };
  const { tracer, exported } = tracerWith(refuse);
  const span = tracer.startSpan('x', SpanKind.SERVER, ROOT_CONTEXT, {});
  span.end();
  expect(span.isRecording()).toBe(false);
  expect(traceparentOf(span.spanContext())).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  expect(exported()).toHaveLength(0);
});
