/**
 * The spans of an OTLP trace export in its JSON encoding (`http/json`: `resourceSpans`, then
 * `scopeSpans`, then `spans`), flattened: each span with its attributes as a plain object and the
 * exporting process. The local trace viewer (tools/traceViewer.ts) reads them, and so do the
 * tests' collector (test/helpers/otlpReceiver.ts).
 */
type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
export type KeyValue = { key: string; value: AnyValue };

export type Attributes = Record<string, string | number | boolean | undefined>;

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Attributes;
  links: { traceId: string; spanId: string }[];
  status?: { code?: number };
  /** When it started (ms since the epoch) and how long it took, when the export says. */
  startMs?: number;
  durationMs?: number;
  /** The exporting process (`service.instance.id`). */
  instance: string;
  service: string;
}

function valueOf(value: AnyValue): string | number | boolean | undefined {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue;
}

export function attributesOf(list: KeyValue[] | undefined): Attributes {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

export interface ExportedResource {
  resource?: { attributes?: KeyValue[] };
}

export function identityOf(entry: ExportedResource) {
  const resource = attributesOf(entry.resource?.attributes);
  return { instance: String(resource['service.instance.id']), service: String(resource['service.name']) };
}

type JsonSpan = Omit<OtlpSpan, 'attributes' | 'instance' | 'service' | 'links' | 'startMs' | 'durationMs'> & {
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string }[];
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
};

export type TraceExport = { resourceSpans?: (ExportedResource & { scopeSpans?: { spans?: JsonSpan[] }[] })[] };

/** Nanoseconds since the epoch (a decimal string in JSON) as milliseconds. */
const msOf = (nanos: string | number | undefined) => (nanos === undefined ? undefined : Number(BigInt(nanos) / 1000n) / 1000);

export function spansOf(body: TraceExport): OtlpSpan[] {
  return (body.resourceSpans ?? []).flatMap((entry) =>
    (entry.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map(({ startTimeUnixNano, endTimeUnixNano, ...span }) => {
        const startMs = msOf(startTimeUnixNano);
        const endMs = msOf(endTimeUnixNano);
        return {
          ...span,
          parentSpanId: span.parentSpanId || undefined,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          ...(startMs !== undefined && endMs !== undefined ? { startMs, durationMs: endMs - startMs } : {}),
          ...identityOf(entry),
        };
      }),
    ),
  );
}
