/**
 * The OpenTelemetry SDK and its exporters, set up as the process's global tracer and meter
 * providers. This file is loaded only when an exporter is configured (src/loading/lazyPackages.ts):
 * without one the app runs on `@opentelemetry/api` alone, whose calls are no-ops, and neither
 * the bundle it starts with nor its cold start carries the SDK.
 *
 * The official SDK packages are used rather than a writer of our own: the OTLP encodings
 * (JSON and protobuf), batching, retries on a collector's 429/503, the standard
 * `OTEL_EXPORTER_OTLP_*` variables (headers, per-signal endpoints, timeouts, compression) and
 * the Application Insights envelope are theirs, kept up to date with the specification.
 */
import { randomUUID } from 'node:crypto';
import type { TokenCredential } from '@azure/identity';
import { context, metrics, propagation, trace, TraceFlags, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { recordCertificateExpiry, recordOrchestrationEnd, startMetrics, type UpstreamBudgetReader } from './metrics';
import { traceNotification, tracePoll } from './orchestrationTracing';
import { CountedContextManager } from './countedContext';
import { GatewayTracer, parentSpanContextOf } from './gatewaySpans';
import { PooledRandomIds } from './spanIds';
import {
  callTraceOf,
  currentTraceCarrier,
  inCallTrace,
  recordUpstreamIdsOnCall,
  traceIncoming,
  traceStorage,
  traceUpstreamAttempt,
  useTracer,
  withOperation,
} from './spans';

/** What src/telemetry/hooks.ts calls once the SDK is set up. */
const instrumentation = {
  traceIncoming,
  callTraceOf,
  inCallTrace,
  recordUpstreamIdsOnCall,
  traceUpstreamAttempt,
  traceStorage,
  currentTraceCarrier,
  tracePoll,
  traceNotification,
  recordOrchestrationEnd,
  recordCertificateExpiry,
  withOperation,
};
export type Instrumentation = typeof instrumentation;

export interface ExportSettings {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: the exporters read it (and the other OTLP variables) themselves. */
  otlp?: { protocol: 'http/json' | 'http/protobuf' };
  /**
   * `APPLICATIONINSIGHTS_CONNECTION_STRING`, and with `APPLICATIONINSIGHTS_AUTHENTICATION_STRING`
   * the managed identity that signs in to it (a resource with local auth off takes nothing else).
   */
  applicationInsights?: { connectionString: string; credential?: TokenCredential };
  serviceName: string;
  serviceVersion: string;
  samplingRatio: number;
  metricIntervalMs: number;
  /** The management service's remaining budgets as the app last saw them (none: the gauge reports nothing). */
  upstreamBudget?: UpstreamBudgetReader;
}

export interface RunningExport {
  instrumentation: Instrumentation;
  /** Sends the spans buffered so far (the bench times the batch export apart from the calls). */
  flushSpans(): Promise<void>;
  /** Sends what is buffered, then stops (the worker stopping). */
  shutdown(): Promise<void>;
  /**
   * Lets go of the process's async context, and takes it again (the bench alternates calls with
   * and without telemetry in one process: on Node 20 and 22 an async context, once used, slows
   * every promise of the process until it is let go).
   */
  releaseContext(): void;
  takeContext(): void;
}

/**
 * Parent-based, with a ratio for a new trace (what the SDK's ParentBasedSampler over its
 * TraceIdRatioBasedSampler decides, without their checks of the parent's ids on every span).
 * Head sampling decides before an outcome is known; to keep every error, a span the ratio
 * drops is still recorded (not sampled), and `KeepErrors` exports it if it ends in error.
 */
class ParentOrRatio implements Sampler {
  readonly #ratio: Sampler;

  constructor(ratio: number) {
    this.#ratio = new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const parentSpanContext = parentSpanContextOf(parent);
    if (parentSpanContext) return parentSpanContext.traceFlags & TraceFlags.SAMPLED ? sampled : recordedOnly;
    const root = this.#ratio.shouldSample(parent, traceId, name, kind, attributes, links);
    return root.decision === SamplingDecision.NOT_RECORD ? recordedOnly : root;
  }

  toString(): string {
    return `ParentOrRatio{${this.#ratio.toString()}}`;
  }
}
const sampled: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const recordedOnly: SamplingResult = { decision: SamplingDecision.RECORD };

/** Passes sampled spans on, and recorded-only ones that ended in error, marked sampled. */
class KeepErrors implements SpanProcessor {
  constructor(private readonly inner: SpanProcessor) {}

  onStart(span: Span, parent: Context): void {
    this.inner.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    const sampled = (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
    if (sampled) return this.inner.onEnd(span);
    if (span.status.code !== 2 /* SpanStatusCode.ERROR */) return;
    const spanContext = { ...span.spanContext(), traceFlags: span.spanContext().traceFlags | TraceFlags.SAMPLED };
    this.inner.onEnd(Object.assign(Object.create(span) as ReadableSpan, { spanContext: () => spanContext }));
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/* eslint-disable @typescript-eslint/no-require-imports -- each exporter is loaded only when its setting asks for it */
function exportersOf(settings: ExportSettings): { spans: SpanExporter[]; metrics: PushMetricExporter[] } {
  const spans: SpanExporter[] = [];
  const metricExporters: PushMetricExporter[] = [];
  if (settings.otlp?.protocol === 'http/json') {
    spans.push(new (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter());
    metricExporters.push(
      new (require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter(),
    );
  } else if (settings.otlp) {
    spans.push(new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter());
    metricExporters.push(
      new (require('@opentelemetry/exporter-metrics-otlp-proto') as typeof import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(),
    );
  }
  if (settings.applicationInsights) {
    const monitor = require('@azure/monitor-opentelemetry-exporter') as typeof import('@azure/monitor-opentelemetry-exporter');
    const { connectionString, credential } = settings.applicationInsights;
    const options = { connectionString, ...(credential && { credential }) };
    spans.push(new monitor.AzureMonitorTraceExporter(options));
    metricExporters.push(new monitor.AzureMonitorMetricExporter(options));
  }
  return { spans, metrics: metricExporters };
}
/* eslint-enable @typescript-eslint/no-require-imports */

/** Registers the providers, the W3C propagator and an async-context manager globally. */
export function startExport(settings: ExportSettings): RunningExport {
  // An instance id per process: a trace whose polls ran on several instances shows which.
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: settings.serviceName,
    [ATTR_SERVICE_VERSION]: settings.serviceVersion,
    'service.instance.id': randomUUID(),
  });
  const exporters = exportersOf(settings);
  const ids = new PooledRandomIds();
  const sampler = new ParentOrRatio(settings.samplingRatio);
  const processors = exporters.spans.map((exporter) => new KeepErrors(new BatchSpanProcessor(exporter)));
  // The app's spans are its own objects (src/telemetry/gatewaySpans.ts) with the same sampler,
  // ids and processors; the SDK's provider, registered globally, serves any other library's
  // spans and flushes and stops the processors.
  const tracerProvider = new BasicTracerProvider({ resource, idGenerator: ids, sampler, spanProcessors: processors });
  useTracer(new GatewayTracer({ resource, scope: { name: 'management-gateway', version: settings.serviceVersion }, sampler, ids, processors }));
  const meterProvider = new MeterProvider({
    resource,
    readers: exporters.metrics.map(
      (exporter) =>
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: settings.metricIntervalMs,
          exportTimeoutMillis: Math.min(30_000, settings.metricIntervalMs),
        }),
    ),
  });
  // One manager taken and let go again: each new one would add a key to every async context.
  const contextManager = new CountedContextManager();
  const takeContext = () => context.setGlobalContextManager(contextManager.enable());
  takeContext();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  startMetrics(settings.upstreamBudget);
  return {
    instrumentation,
    flushSpans: () => tracerProvider.forceFlush(),
    releaseContext: () => context.disable(),
    takeContext,
    // A collector that cannot be reached as the worker stops loses what was buffered; it never
    // fails the stop (an exporter's failed last send would otherwise be an unhandled rejection).
    shutdown: async () => {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
