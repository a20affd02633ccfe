/**
 * `npm start -- --traces`: a tiny OTLP/HTTP receiver inside the local host, on 127.0.0.1, that the
 * app exports to (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and that
 * prints each trace as a tree as it arrives (tools/traceTree.ts), instead of a collector. Metrics
 * are taken and dropped.
 *
 * A trace is printed `windowMs` after the span where the app's work began arrived (the call's,
 * the poll's or the delivery's: it ends last, and a batch may end between it and the others), or
 * after `holdMs` without one; spans of a trace printed already are printed after it as more of it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spansOf, type OtlpSpan, type TraceExport } from './otlpSpans';
import { readBody } from './requestBody';
import { isEntry, traceLines, type TraceNames } from './traceTree';

export interface TraceViewer {
  /** The endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  /** Prints what is still held, then stops. */
  close(): Promise<void>;
}

export interface TraceViewerOptions {
  /** How long after the span where the app's work began a trace is printed. */
  windowMs?: number;
  /** How long a trace without that span is held before it is printed. */
  holdMs?: number;
  /** The largest export request read (the app's batches are far smaller); a larger one is cut off. */
  maxBodyBytes?: number;
  /** Traces held at once, and names of printed ones kept for later spans: past it the oldest goes (printed now, or forgotten). */
  maxTraces?: number;
}

export async function startTraceViewer(print: (text: string) => void, options: TraceViewerOptions = {}): Promise<TraceViewer> {
  const { windowMs = 1000, holdMs = 60_000, maxBodyBytes = 8 * 1024 * 1024, maxTraces = 1000 } = options;
  const names: TraceNames = { originMs: Number.NaN, printed: new Map() };
  const held = new Map<string, { spans: OtlpSpan[]; timer: NodeJS.Timeout }>();

  const flush = (traceId: string) => {
    const trace = held.get(traceId);
    if (!trace) return;
    clearTimeout(trace.timer);
    held.delete(traceId);
    if (Number.isNaN(names.originMs)) names.originMs = Math.min(...trace.spans.map((span) => span.startMs ?? Date.now()));
    names.printed.set(traceId, (trace.spans.find(isEntry) ?? trace.spans[0]!).name);
    if (names.printed.size > maxTraces) names.printed.delete(names.printed.keys().next().value!);
    print(`${traceLines(traceId, trace.spans, names).join('\n')}\n`);
  };

  const take = (spans: OtlpSpan[]) => {
    const byTrace = new Map<string, OtlpSpan[]>();
    for (const span of spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
    for (const [traceId, arrived] of byTrace) {
      if (names.printed.has(traceId)) {
        print(`${traceLines(traceId, arrived, names, true).join('\n')}\n`);
        continue;
      }
      const trace = held.get(traceId) ?? { spans: [], timer: setTimeout(() => flush(traceId), holdMs) };
      held.set(traceId, trace);
      if (held.size > maxTraces) flush(held.keys().next().value!);
      trace.spans.push(...arrived);
      if (arrived.some(isEntry)) {
        clearTimeout(trace.timer);
        trace.timer = setTimeout(() => flush(traceId), windowMs);
      }
    }
  };

  const server = createServer((request, response) => {
    void readBody(request, maxBodyBytes).then(
      (body) => {
        if (!body) return; // Cut off: past maxBodyBytes.
        if (request.url !== '/v1/traces') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        try {
          take(spansOf(JSON.parse(body.toString('utf8')) as TraceExport));
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          // Only the JSON encoding is read: OTEL_EXPORTER_OTLP_PROTOCOL=http/json.
          response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        }
      },
      () => undefined,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const traceId of [...held.keys()]) flush(traceId);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
