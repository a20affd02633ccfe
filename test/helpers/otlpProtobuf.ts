/**
 * Reads OTLP's protobuf encoding (`http/protobuf`, the default protocol) into the shape of its
 * JSON encoding, for the test collector: a wire-format reader and the field numbers of the
 * OTLP messages (opentelemetry-proto: trace/v1, metrics/v1, common/v1, resource/v1). Only what
 * the tests read is mapped: names, ids, kinds, attributes, links, status and number points.
 */
type Field = bigint | Buffer;
type Message = Map<number, Field[]>;

function readVarint(bytes: Buffer, at: number): [bigint, number] {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = bytes[at++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [value, at];
  }
}

/** One message's fields by number: varints as bigint, everything else as its bytes. */
function fieldsOf(bytes: Buffer): Message {
  const fields: Message = new Map();
  let at = 0;
  while (at < bytes.length) {
    const [key, next] = readVarint(bytes, at);
    at = next;
    const wireType = Number(key & 7n);
    let value: Field;
    if (wireType === 0) [value, at] = readVarint(bytes, at);
    else if (wireType === 1 || wireType === 5) {
      const size = wireType === 1 ? 8 : 4;
      value = bytes.subarray(at, at + size);
      at += size;
    } else if (wireType === 2) {
      const [length, start] = readVarint(bytes, at);
      value = bytes.subarray(start, start + Number(length));
      at = start + Number(length);
    } else throw new Error(`Unsupported protobuf wire type ${wireType}`);
    const number = Number(key >> 3n);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const all = (message: Message, field: number) => (message.get(field) ?? []).map((value) => fieldsOf(value as Buffer));
const one = (message: Message, field: number) => all(message, field)[0] ?? new Map<number, Field[]>();
const text = (message: Message, field: number) => (message.get(field)?.[0] as Buffer | undefined)?.toString('utf8');
const hex = (message: Message, field: number) => (message.get(field)?.[0] as Buffer | undefined)?.toString('hex') ?? '';
const varint = (message: Message, field: number) => message.get(field)?.[0] as bigint | undefined;
const double = (message: Message, field: number) => (message.get(field)?.[0] as Buffer | undefined)?.readDoubleLE(0);

function anyValueOf(value: Message) {
  if (value.has(1)) return { stringValue: text(value, 1) };
  if (value.has(2)) return { boolValue: varint(value, 2) === 1n };
  if (value.has(3)) return { intValue: Number(BigInt.asIntN(64, varint(value, 3)!)) };
  return { doubleValue: double(value, 4) };
}

const attributesOf = (message: Message, field: number) => all(message, field).map((pair) => ({ key: text(pair, 1)!, value: anyValueOf(one(pair, 2)) }));
const resourceOf = (message: Message) => ({ attributes: attributesOf(one(message, 1), 1) });

/** An ExportTraceServiceRequest, as its JSON encoding writes it. */
export function traceRequestOf(bytes: Buffer) {
  return {
    resourceSpans: all(fieldsOf(bytes), 1).map((resourceSpans) => ({
      resource: resourceOf(resourceSpans),
      scopeSpans: all(resourceSpans, 2).map((scopeSpans) => ({
        spans: all(scopeSpans, 2).map((span) => ({
          traceId: hex(span, 1),
          spanId: hex(span, 2),
          parentSpanId: hex(span, 4),
          name: text(span, 5)!,
          kind: Number(varint(span, 6) ?? 0n),
          attributes: attributesOf(span, 9),
          links: all(span, 13).map((link) => ({ traceId: hex(link, 1), spanId: hex(link, 2) })),
          status: { code: Number(varint(one(span, 15), 3) ?? 0n) },
        })),
      })),
    })),
  };
}

function numberPointOf(point: Message) {
  const asInt = point.get(6)?.[0] as Buffer | undefined;
  return { attributes: attributesOf(point, 7), ...(asInt ? { asInt: Number(asInt.readBigInt64LE(0)) } : { asDouble: double(point, 4) }) };
}

/** An ExportMetricsServiceRequest, as its JSON encoding writes it (sums, gauges, histograms). */
export function metricsRequestOf(bytes: Buffer) {
  return {
    resourceMetrics: all(fieldsOf(bytes), 1).map((resourceMetrics) => ({
      resource: resourceOf(resourceMetrics),
      scopeMetrics: all(resourceMetrics, 2).map((scopeMetrics) => ({
        metrics: all(scopeMetrics, 2).map((metric) => ({
          name: text(metric, 1)!,
          ...(metric.has(5) ? { gauge: { dataPoints: all(one(metric, 5), 1).map(numberPointOf) } } : {}),
          ...(metric.has(7) ? { sum: { dataPoints: all(one(metric, 7), 1).map(numberPointOf) } } : {}),
          ...(metric.has(9)
            ? {
                histogram: {
                  dataPoints: all(one(metric, 9), 1).map((point) => ({
                    attributes: attributesOf(point, 9),
                    count: Number((point.get(4)?.[0] as Buffer).readBigUInt64LE(0)),
                    sum: double(point, 5),
                  })),
                },
              }
            : {}),
        })),
      })),
    })),
  };
}
