/**
 * The documented operations through the app over HTTP: paging, bad input, upstream faults,
 * the call log, and secrets kept out of it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { emulatorToken, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const subscriptionId = '00000000-0000-0000-0000-000000000000';
const usages = `subscriptions/${subscriptionId}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const groupPath = `subscriptions/${subscriptionId}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/web?api-version=2025-09-01`;
const migratePath = `subscriptions/${subscriptionId}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2?api-version=2024-05-01`;
const secureValue = 'CANARY-SECRET-8d1f';

let gateway: GatewayFixture;
beforeAll(async () => {
  gateway = await startGateway({ UPSTREAM_TIMEOUT_MS: '1500' }, { listItems: 5, pageSize: 2 });
});
afterAll(async () => {
  await gateway.stop();
});
beforeEach(() => gateway.emulator.reset());

/** Answers are read loosely: the assertions say what each must hold. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseJson = Record<string, any>;

async function call(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const response = await request(gateway.api(path), {
    method: (init.method ?? 'GET') as 'GET',
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body,
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, json: text ? (JSON.parse(text) as LooseJson) : undefined };
}

describe('paging', () => {
  it('points nextLink back at the app, and following it gives the next page', async () => {
    const first = await call(usages);
    expect(first.status).toBe(200);
    expect(first.json!.value).toHaveLength(2);
    const nextLink = first.json!.nextLink as string;
    expect(nextLink.startsWith(`${gateway.app.url}/api/subscriptions/`)).toBe(true);
    const second = await request(nextLink);
    const secondPage = (await second.body.json()) as { value: { id: string }[]; nextLink: string };
    expect(secondPage.value.map((usage) => usage.id)).toEqual(['usage-2', 'usage-3']);
    expect(secondPage.nextLink.startsWith(gateway.app.url)).toBe(true);
  });

  it('merges every page into one value with gateway-pages=all', async () => {
    const merged = await call(`${usages}&gateway-pages=all`);
    expect(merged.json!.value.map((usage: { id: string }) => usage.id)).toEqual(['usage-0', 'usage-1', 'usage-2', 'usage-3', 'usage-4']);
    expect(merged.json!.nextLink).toBeUndefined();
    expect(gateway.emulator.upstreamRequests()).toHaveLength(3);
    expect(gateway.emulator.upstreamRequests().every((seen) => !('gateway-pages' in seen.query))).toBe(true);
  });

  it('refuses a nextLink to a foreign host without sending the token there', async () => {
    let foreignCalls = 0;
    const foreign: Server = createServer((_request, response) => {
      foreignCalls += 1;
      response.end('{"value":[]}');
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    const foreignLink = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/steal?api-version=1`;
    gateway.emulator.script({ kind: 'answer', status: 200, body: { value: [{ id: 'a' }], nextLink: foreignLink }, times: 2 });
    for (const path of [usages, `${usages}&gateway-pages=all`]) {
      const response = await call(path);
      expect(response.status).toBe(502);
      expect(response.json!.error.code).toBe('UpstreamLinkRefused');
    }
    expect(foreignCalls).toBe(0);
    await new Promise<void>((resolve) => foreign.close(() => resolve()));
  });
});

describe('bad input', () => {
  it.each([
    [
      'a namespaceName breaking its pattern',
      `subscriptions/s/resourceGroups/rg/providers/Vendor.EventHub/namespaces/bad/privateEndpointConnections/p?api-version=2026-01-01`,
      'PUT',
      {},
      400,
      'namespaceName',
    ],
    ['malformed JSON', groupPath, 'PUT', '{"properties":', 400, 'containerGroup'],
    [
      'a body too large',
      groupPath,
      'PUT',
      { properties: { containers: [{ name: 'a', properties: {} }] }, pad: 'x'.repeat(5 * 1024 * 1024) },
      413,
      'containerGroup',
    ],
    [
      'a missing api-version',
      `subscriptions/${subscriptionId}/providers/Vendor.ContainerInstance/locations/westus/cachedImages`,
      'GET',
      undefined,
      400,
      'api-version',
    ],
    ['an environmentId that is not a GUID', 'environmentinfo/v1/rsatdownload/project/1/environment/abc', 'GET', undefined, 400, 'environmentId'],
    [
      'an encoded slash in a path parameter',
      `subscriptions/${subscriptionId}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/a%2F..%2Fb?api-version=2025-09-01`,
      'PUT',
      { properties: { containers: [{ name: 'a', properties: {} }] } },
      400,
      'containerGroupName',
    ],
  ])('%s: %i in the documented shape, nothing sent upstream', async (_title, path, method, body, status, target) => {
    const response = await call(path, { method, body });
    expect(response.status).toBe(status);
    expect(response.json!.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const targets = [response.json!.error.target, ...(response.json!.error.details ?? []).map((detail: { target: string }) => detail.target)];
    expect(targets).toContain(target);
    expect(gateway.emulator.upstreamRequests()).toHaveLength(0);
  });

  it('answers an unknown route with 404 in the documented shape', async () => {
    const response = await call('subscriptions/x/nothing-here');
    expect(response.status).toBe(404);
    expect(response.json!.error.code).toBe('NotFound');
  });

  it('answers a method no function takes on a route with the methods it does take', async () => {
    const response = await request(gateway.api('orchestrations/some-id'), { method: 'PATCH' });
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toEqual({ error: { code: 'NotFound', message: 'No function accepts PATCH on this route: it takes DELETE, GET.' } });
  });
});

describe('upstream faults', () => {
  it('429 then 200: the caller sees the 200', async () => {
    gateway.emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '1' } });
    expect((await call(usages)).status).toBe(200);
    expect(gateway.emulator.upstreamRequests()).toHaveLength(2);
  });

  it('503 on the migration POST is passed back as it came and not repeated', async () => {
    gateway.emulator.script({
      kind: 'answer',
      method: 'POST',
      status: 503,
      headers: { 'x-ms-request-id': 'upstream-req-1' },
      body: { error: { code: 'ServiceUnavailable', message: 'Try later.' } },
    });
    const response = await call(migratePath, { method: 'POST', body: { mode: 'NewIP' } });
    expect(response.status).toBe(503);
    expect(response.json).toEqual({ error: { code: 'ServiceUnavailable', message: 'Try later.' } });
    expect(response.headers['x-ms-request-id']).toBe('upstream-req-1');
    expect(gateway.emulator.upstreamRequests({ method: 'POST' })).toHaveLength(1);
  });

  it('a reset on the POST gives 502 and one upstream call', async () => {
    gateway.emulator.script({ kind: 'reset', method: 'POST' });
    const response = await call(migratePath, { method: 'POST' });
    expect(response.status).toBe(502);
    expect(response.json!.error.code).toBe('UpstreamUnreachable');
    expect(gateway.emulator.upstreamRequests({ method: 'POST' })).toHaveLength(1);
  });

  it('a malformed list body gives 502', async () => {
    gateway.emulator.script({ kind: 'malformed' });
    const response = await call(usages);
    expect(response.status).toBe(502);
    expect(response.json!.error.code).toBe('UpstreamBadResponse');
  });

  it('an upstream slower than the budget gives 504', async () => {
    gateway.emulator.script({ kind: 'delay', delayMs: 3000 });
    const response = await call(usages);
    expect(response.status).toBe(504);
    expect(response.json!.error.code).toBe('UpstreamTimeout');
  });
});

describe('the call log', () => {
  it('leaves one structured line per call, with no secret in any line', async () => {
    const correlationId = 'e2e-correlation-42';
    const body = {
      location: 'westus',
      properties: { containers: [{ name: 'web', properties: { image: 'nginx', environmentVariables: [{ name: 'PASSWORD', secureValue }] } }] },
    };
    const response = await call(groupPath, { method: 'PUT', body, headers: { 'x-ms-client-request-id': correlationId } });
    expect(response.status).toBe(201);
    expect(response.headers['x-correlation-id']).toBe(correlationId);
    expect(gateway.emulator.upstreamRequests()[0]!.headers['x-ms-correlation-request-id']).toBe(correlationId);
    // The upstream keeps secrets out of its answer ("Hidden in responses").
    expect(response.text).not.toContain(secureValue);

    await new Promise((resolve) => setTimeout(resolve, 100));
    const record = gateway.app.callRecords().find((entry) => entry.correlationId === correlationId);
    expect(record).toMatchObject({
      operation: 'ContainerGroups_CreateOrUpdate',
      target: `/subscriptions/${subscriptionId}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/web`,
      caller: 'anonymous',
      status: 201,
      upstreamStatus: 201,
      durationMs: expect.any(Number),
    });
    const allOutput = gateway.app.lines.join('\n');
    expect(allOutput).not.toContain(secureValue);
    expect(allOutput).not.toContain(emulatorToken);
  });
});
