/**
 * An OTLP/HTTP collector on 127.0.0.1, as an operator would point the app at one: it takes
 * `POST /v1/traces` and `/v1/metrics` in the JSON encoding (`http/json`) or the protobuf one
 * (`http/protobuf`), keeps every raw payload (for the secret scan) and flattens what it decoded
 * into spans and metric points.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attributesOf, identityOf, spansOf, type Attributes, type ExportedResource, type KeyValue, type OtlpSpan } from '../../tools/otlpSpans';
import { metricsRequestOf, traceRequestOf } from './otlpProtobuf';

export type { Attributes } from '../../tools/otlpSpans';

/** A span as the collector received it (tools/otlpSpans.ts reads the JSON encoding; ./otlpProtobuf the other). */
export type ReceivedSpan = OtlpSpan;

export interface MetricPoint {
  name: string;
  attributes: Attributes;
  /** A sum's or gauge's value; a histogram's sum. */
  value: number;
  /** A histogram's count. */
  count?: number;
  instance: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every point of every export, in order (cumulative: a later export of one instance holds the totals). */
  points: MetricPoint[];
  /** Every payload as received, to search for secrets. */
  payloads: string[];
  /** Content types seen, by path. */
  contentTypes: string[];
  close(): Promise<void>;
}

type JsonPoint = { attributes?: KeyValue[]; asInt?: number | string; asDouble?: number; count?: number | string; sum?: number };
type JsonMetric = { name: string; sum?: { dataPoints: JsonPoint[] }; gauge?: { dataPoints: JsonPoint[] }; histogram?: { dataPoints: JsonPoint[] } };

function pointsOf(body: { resourceMetrics?: (ExportedResource & { scopeMetrics?: { metrics?: JsonMetric[] }[] })[] }): MetricPoint[] {
  return (body.resourceMetrics ?? []).flatMap((entry) =>
    (entry.scopeMetrics ?? []).flatMap((scope) =>
      (scope.metrics ?? []).flatMap((metric) => {
        const { instance } = identityOf(entry);
        const histogram = metric.histogram?.dataPoints.map((point) => ({
          name: metric.name,
          attributes: attributesOf(point.attributes),
          value: point.sum ?? 0,
          count: Number(point.count),
          instance,
        }));
        const plain = (metric.sum ?? metric.gauge)?.dataPoints.map((point) => ({
          name: metric.name,
          attributes: attributesOf(point.attributes),
          value: Number(point.asInt ?? point.asDouble),
          instance,
        }));
        return histogram ?? plain ?? [];
      }),
    ),
  );
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: MetricPoint[] = [];
  const payloads: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const text = bytes.toString('utf8');
      payloads.push(text);
      contentTypes.push(`${request.url} ${request.headers['content-type']}`);
      try {
        const protobuf = request.headers['content-type'] === 'application/x-protobuf';
        const decoded = protobuf ? (request.url === '/v1/traces' ? traceRequestOf(bytes) : metricsRequestOf(bytes)) : (JSON.parse(text) as unknown);
        const body = decoded as Parameters<typeof spansOf>[0] & Parameters<typeof pointsOf>[0];
        if (request.url === '/v1/traces') spans.push(...spansOf(body));
        if (request.url === '/v1/metrics') points.push(...pointsOf(body));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    payloads,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The last value of a metric point matching `attributes`, per instance, added up over instances. */
export function latestTotal(points: MetricPoint[], name: string, attributes: Attributes = {}, field: 'value' | 'count' = 'value'): number {
  const latest = new Map<string, number>();
  for (const point of points) {
    if (point.name !== name || !Object.entries(attributes).every(([key, value]) => point.attributes[key] === value)) continue;
    latest.set(`${point.instance} ${JSON.stringify(point.attributes)}`, point[field] ?? 0);
  }
  return [...latest.values()].reduce((sum, value) => sum + value, 0);
}
