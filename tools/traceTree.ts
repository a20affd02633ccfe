/**
 * A trace as a person reads it in a terminal (`npm start -- --traces`, tools/traceViewer.ts): one
 * line per span, indented under its parent, with its kind, when it started (from the first span
 * the viewer saw), how long it took and the few attributes that say what it did; a poll's or a
 * notification's link to the start it belongs to names the start's trace.
 *
 *   trace 348f589c  PUT ContainerGroups_CreateOrUpdate  [server, +0.0s, 140 ms]  http.response.status_code=201
 *   ├─ storage claim a request key  [client, +0.1s, 37 ms]
 *   └─ PUT  [client, +0.1s, 11 ms]  url.full=http://127.0.0.1:7072/…  http.response.status_code=201
 */
import type { OtlpSpan } from './otlpSpans';

const kinds: Record<number, string> = { 1: 'internal', 2: 'server', 3: 'client', 4: 'producer', 5: 'consumer' };

/** What each line shows of a span's attributes, in this order (the others are in the export). */
const shownAttributes = [
  'http.response.status_code',
  'url.full',
  'http.request.resend_count',
  'gateway.orchestration.id',
  'gateway.orchestration.poll_count',
  'cloudevents.event_type',
  'gateway.notification.delivered',
  'error.type',
];

export interface TraceNames {
  /** When the first span the viewer saw started (ms since the epoch): times are shown from it. */
  originMs: number;
  /** Each trace printed so far, by id: the name of its first span, for the links to it. */
  printed: Map<string, string>;
}

export const shortId = (id: string) => id.slice(0, 8);

/** Whether a span is where the app's own work begins: a call's (server), a poll's (consumer), a delivery's (producer). */
export const isEntry = (span: OtlpSpan) => span.kind === 2 || span.kind === 4 || span.kind === 5;

/** A long URL with the middle of its path left out: its origin, its last two segments and its query. */
function shortUrl(text: string): string {
  if (text.length <= 100) return text;
  const url = new URL(text);
  return `${url.origin}/…/${url.pathname.split('/').slice(-2).join('/')}${url.search}`;
}

function attributesLine(span: OtlpSpan): string {
  return shownAttributes
    .filter((key) => span.attributes[key] !== undefined && !(key === 'http.request.resend_count' && span.attributes[key] === 0))
    .map((key) => `  ${key}=${key === 'url.full' ? shortUrl(String(span.attributes[key])) : String(span.attributes[key])}`)
    .join('');
}

function timingOf(span: OtlpSpan, names: TraceNames): string {
  if (span.startMs === undefined) return '';
  const seconds = (span.startMs - names.originMs) / 1000;
  return `, ${seconds < 0 ? '-' : '+'}${Math.abs(seconds).toFixed(1)}s, ${Math.round(span.durationMs ?? 0)} ms`;
}

function spanLine(span: OtlpSpan, names: TraceNames): string {
  const timing = timingOf(span, names);
  const failed = span.status?.code === 2 ? '  ERROR' : '';
  const links = span.links
    .map((link) => `  link → trace ${shortId(link.traceId)}${names.printed.has(link.traceId) ? ` (${names.printed.get(link.traceId)})` : ''}`)
    .join('');
  return `${span.name}  [${kinds[span.kind] ?? 'span'}${timing}]${failed}${attributesLine(span)}${links}`;
}

const byStart = (a: OtlpSpan, b: OtlpSpan) => (a.startMs ?? 0) - (b.startMs ?? 0);

/**
 * The lines of one trace's spans: each span whose parent is not among them is a root (the
 * call's, poll's or delivery's own span; or, for spans that came late, one already printed).
 */
export function traceLines(traceId: string, spans: readonly OtlpSpan[], names: TraceNames, more = false): string[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string, OtlpSpan[]>();
  for (const span of spans)
    if (span.parentSpanId && ids.has(span.parentSpanId)) children.set(span.parentSpanId, [...(children.get(span.parentSpanId) ?? []), span]);
  const lines: string[] = [];
  const walk = (span: OtlpSpan, prefix: string, last: boolean, root: boolean) => {
    lines.push(root ? spanLine(span, names) : `${prefix}${last ? '└─ ' : '├─ '}${spanLine(span, names)}`);
    const below = (children.get(span.spanId) ?? []).sort(byStart);
    const inner = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
    below.forEach((child, index) => walk(child, inner, index === below.length - 1, false));
  };
  const roots = spans.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId)).sort(byStart);
  for (const root of roots) walk(root, '', true, true);
  const heading = `trace ${shortId(traceId)}${more ? ' (more of it)' : ''}  `;
  return lines.map((line, index) => (index === 0 ? heading : ' '.repeat(heading.length)) + line);
}
