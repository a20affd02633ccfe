/**
 * A hostile upstream answering with JSON nested far deeper than any resource (20,000 levels in
 * 100 KB): the app walks what it reads (secrets redacted, pages merged), so such an answer is
 * refused as it arrives, by UPSTREAM_MAX_JSON_DEPTH, never a 500 nor an orchestration left
 * Pending. Against the emulator and Azurite over loopback.
 */
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

const maxDepth = 32;
const subscription = '00000000-0000-0000-0000-000000000000';
const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
/** An object `depth` levels deep. */
const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`;

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = await startInProcessGateway(
    { UPSTREAM_MAX_JSON_DEPTH: String(maxDepth), LRO_MIN_POLL_SECONDS: '1', LRO_DEFAULT_POLL_SECONDS: '1' },
    { retryAfterSeconds: 1 },
  );
}, 60_000);
afterAll(async () => gateway.stop());
beforeEach(() => gateway.emulator.reset());

async function call(method: 'GET' | 'PUT', path: string) {
  const response = await request(`${gateway.url}/api/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'PUT' ? groupBody : undefined,
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    json: JSON.parse(text) as { error?: { code: string; message: string }; value?: unknown[]; runtimeStatus?: string },
  };
}

it('a start answered that deep: 502 UpstreamBadResponse, and the orchestration ends Failed, not Pending', async () => {
  gateway.emulator.script({ kind: 'answer', method: 'PUT', pathPattern: 'containerGroups/deep-start$', status: 201, body: nested(20_000) });
  const started = await call('PUT', groupPath('deep-start'));
  expect(started.status).toBe(502);
  expect(started.json.error).toMatchObject({ code: 'UpstreamBadResponse', message: expect.stringContaining('UPSTREAM_MAX_JSON_DEPTH') });
  const list = await call('GET', 'orchestrations');
  const [summary] = (list.json.value ?? []) as { id: string; runtimeStatus: string }[];
  expect(summary).toMatchObject({ runtimeStatus: 'Failed' });
  const state = await call('GET', `orchestrations/${summary!.id}`);
  expect(state.json).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'UpstreamBadResponse' } });
});

it('a poll answered that deep is a failed read: the orchestration goes on, and ends when the upstream answers sense', async () => {
  const started = await call('PUT', groupPath('deep-poll'));
  expect(started.status).toBe(201);
  const id = started.headers['x-orchestration-id'] as string;
  gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'operationResults', status: 200, body: nested(20_000), times: 1 });
  await new Promise((resolve) => setTimeout(resolve, 1200));
  await gateway.host.runTimer('orchestrationPoller');
  expect(gateway.logLines.filter((line) => line.includes('poll-error'))).toEqual([]);
  expect((await call('GET', `orchestrations/${id}`)).json).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 502 } });
  for (let run = 0; run < 30 && (await call('GET', `orchestrations/${id}`)).json.runtimeStatus === 'Running'; run += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await gateway.host.runTimer('orchestrationPoller');
  }
  expect((await call('GET', `orchestrations/${id}`)).json).toMatchObject({ runtimeStatus: 'Completed' });
}, 60_000);

it('a list: an item that deep is a 502, merged or not; one within the bound is answered', async () => {
  const page = (depth: number) => `{"value":[${nested(depth)}],"nextLink":"${gateway.emulator.url}/${usagesPath}?api-version=2026-07-01&$skipToken=x"}`;
  gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: page(20_000), times: 2 });
  for (const query of ['', '&gateway-pages=all']) {
    const answer = await call('GET', `${usagesPath}?api-version=2026-07-01${query}`);
    expect([answer.status, answer.json.error?.code]).toEqual([502, 'UpstreamBadResponse']);
  }
  gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: page(maxDepth - 2), times: 1 });
  expect((await call('GET', `${usagesPath}?api-version=2026-07-01`)).status).toBe(200);
  gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: page(maxDepth), times: 1 });
  expect((await call('GET', `${usagesPath}?api-version=2026-07-01`)).status).toBe(502);
});
