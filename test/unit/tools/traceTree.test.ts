/**
 * How `npm start -- --traces` shows a trace: each span under its parent, its kind, time and the
 * attributes that say what it did, a long URL shortened, and a poll's link naming the start.
 */
import type { OtlpSpan } from '../../../tools/otlpSpans';
import { traceLines, type TraceNames } from '../../../tools/traceTree';

const origin = 1_700_000_000_000;
const span = (fields: Partial<OtlpSpan> & Pick<OtlpSpan, 'spanId' | 'name' | 'kind'>): OtlpSpan => ({
  traceId: 'aaaaaaaa000000000000000000000001',
  attributes: {},
  links: [],
  instance: 'i1',
  service: 'management-gateway',
  startMs: origin,
  durationMs: 10,
  ...fields,
});

it('prints a call as a tree: the call first, its storage calls and upstream attempts under it, in the order they started', () => {
  const names: TraceNames = { originMs: origin, printed: new Map() };
  const lines = traceLines(
    'aaaaaaaa000000000000000000000001',
    [
      span({
        spanId: 's2',
        parentSpanId: 's1',
        name: 'PUT',
        kind: 3,
        startMs: origin + 20,
        attributes: {
          'url.full': `http://127.0.0.1:7072/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/web?api-version=2025-09-01`,
          'http.response.status_code': 201,
          'http.request.resend_count': 0,
        },
      }),
      span({ spanId: 's3', parentSpanId: 's1', name: 'storage create an orchestration', kind: 3, startMs: origin + 5 }),
      span({
        spanId: 's1',
        parentSpanId: 'caller-span',
        name: 'PUT ContainerGroups_CreateOrUpdate',
        kind: 2,
        durationMs: 140.4,
        attributes: { 'http.response.status_code': 201, 'gateway.correlation_id': 'c1' },
      }),
    ],
    names,
  );
  expect(lines).toEqual([
    'trace aaaaaaaa  PUT ContainerGroups_CreateOrUpdate  [server, +0.0s, 140 ms]  http.response.status_code=201',
    '                ├─ storage create an orchestration  [client, +0.0s, 10 ms]',
    '                └─ PUT  [client, +0.0s, 10 ms]  http.response.status_code=201  url.full=http://127.0.0.1:7072/…/containerGroups/web?api-version=2025-09-01',
  ]);
});

it("names the start a poll is linked to, once the start's trace was printed", () => {
  const names: TraceNames = { originMs: origin, printed: new Map([['aaaaaaaa000000000000000000000001', 'PUT ContainerGroups_CreateOrUpdate']]) };
  const poll = span({
    traceId: 'bbbbbbbb000000000000000000000002',
    spanId: 'p1',
    name: 'poll ContainerGroups_CreateOrUpdate',
    kind: 5,
    startMs: origin + 2300,
    attributes: { 'gateway.orchestration.id': 'o1', 'gateway.orchestration.poll_count': 0 },
    links: [{ traceId: 'aaaaaaaa000000000000000000000001', spanId: 's1' }],
  });
  expect(traceLines(poll.traceId, [poll], names)).toEqual([
    'trace bbbbbbbb  poll ContainerGroups_CreateOrUpdate  [consumer, +2.3s, 10 ms]  gateway.orchestration.id=o1  gateway.orchestration.poll_count=0  link → trace aaaaaaaa (PUT ContainerGroups_CreateOrUpdate)',
  ]);
});
