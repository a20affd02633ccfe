/**
 * The orchestration API a chat-ops bot uses, through the built app on the local host: wait for
 * the end in one call (`gateway-wait`), be told of it (`x-gateway-notify`: a signed CloudEvent
 * to a real local receiver), find orchestrations (filters, showInput, paging) and clean up
 * (purge one, purge by filter), every poller run leaving one log line.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { notifyingFastPolling, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';

const subscription = '00000000-0000-0000-0000-000000000000';
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
const usages = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;

let gateway: GatewayFixture;
let hooks: WebhookReceiver;
beforeAll(async () => {
  hooks = await startWebhookReceiver(secret);
  gateway = await startGateway(
    {
      ...notifyingFastPolling(hooks.origin, secret),
      GATEWAY_WAIT_MAX_SECONDS: '20',
      LOG_LEVEL: 'debug',
    },
    { lroSteps: 2, retryAfterSeconds: 1 },
  );
});
afterAll(async () => {
  await gateway.stop();
  await hooks.close();
});

async function call(method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}) {
  const started = performance.now();
  const response = await request(gateway.api(path), {
    method: method as 'GET',
    body: options.body,
    headers: { ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    ms: performance.now() - started,
  };
}

describe('gateway-wait', () => {
  it('answers a start with the final resource in one call', async () => {
    const answer = await call('PUT', `${groupPath('waited')}&gateway-wait=15`, { body: groupBody });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ name: 'waited', properties: { provisioningState: 'Succeeded' } });
    expect(answer.headers['x-orchestration-id']).toEqual(expect.any(String));
    // The upstream was read as often as it asked, no more: two status reads and the final GET.
    expect(gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/waited' })).toHaveLength(1);
  });

  it('holds operations/{id} and orchestrations/{id} until the end, and answers as usual when the wait runs out', async () => {
    const started = await call('PUT', groupPath('waited-later'), { body: groupBody });
    expect(started.status).toBe(201);
    const id = started.headers['x-orchestration-id'] as string;
    const short = await call('GET', `operations/${id}?gateway-wait=0`);
    expect(short.status).toBe(202);
    const final = await call('GET', `operations/${id}?gateway-wait=15`);
    expect(final).toMatchObject({ status: 200, json: { name: 'waited-later' } });
    const document = await call('GET', `orchestrations/${id}?gateway-wait=15`);
    expect(document).toMatchObject({ status: 200, json: { runtimeStatus: 'Completed' } });
  });

  it('is refused when it is not a number of seconds, or not on a long-running operation', async () => {
    expect((await call('PUT', `${groupPath('bad-wait')}&gateway-wait=soon`, { body: groupBody })).json).toMatchObject({
      error: { code: 'InvalidRequest', target: 'gateway-wait' },
    });
    expect((await call('GET', `${usages}&gateway-wait=5`)).status).toBe(400);
    expect((await call('GET', 'operations/6f1a2b3c-1234-4abc-9def-0123456789ab?gateway-wait=-3')).status).toBe(400);
  });
});

describe('x-gateway-notify', () => {
  it('tells the target of the end with a signed CloudEvent', async () => {
    const started = await call('PUT', groupPath('notified'), { body: groupBody, headers: { 'x-gateway-notify': `${hooks.url}&bot=ops` } });
    expect(started.status).toBe(201);
    const id = started.headers['x-orchestration-id'] as string;
    const deadline = Date.now() + 20_000;
    while (!hooks.deliveries.some((delivery) => delivery.event?.subject === id) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const delivery = hooks.deliveries.find((candidate) => candidate.event?.subject === id);
    expect(delivery).toMatchObject({
      verified: true,
      event: { type: 'gateway.orchestration.completed', source: gateway.api('').replace(/\/$/, ''), data: { runtimeStatus: 'Completed' } },
    });
    expect(delivery!.headers.authorization).toBeUndefined();
    // The receiver has the event before the app has recorded its answer: read until it has.
    let document = await call('GET', `orchestrations/${id}`);
    for (let tries = 0; tries < 100 && JSON.stringify(document.json).includes('"pending"'); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      document = await call('GET', `orchestrations/${id}`);
    }
    expect(document.json).toMatchObject({ notifications: [{ targetOrigin: hooks.origin, state: 'delivered', attempts: 1 }] });
    expect(JSON.stringify(document.json)).not.toContain('bot=ops');
  });

  it.each<[string, Record<string, string>, string, string]>([
    ['another origin', { 'x-gateway-notify': 'http://127.0.0.1:9/steal' }, 'NotifyTargetNotAllowed', groupPath('not-allowed')],
    ['not a URL', { 'x-gateway-notify': 'somewhere' }, 'InvalidRequest', groupPath('not-a-url')],
    ['an operation that does not run long', { 'x-gateway-notify': 'http://127.0.0.1:9/x' }, 'InvalidRequest', usages],
  ])('refuses %s before any upstream call', async (_title, headers, code, path) => {
    gateway.emulator.reset();
    const method = path.includes('containerGroups') ? 'PUT' : 'GET';
    const answer = await call(method, path, { body: method === 'PUT' ? groupBody : undefined, headers });
    expect(answer).toMatchObject({ status: 400, json: { error: { code, target: 'x-gateway-notify' } } });
    expect(gateway.emulator.upstreamRequests()).toEqual([]);
  });
});

describe('finding and cleaning up', () => {
  it("lists with Durable Functions' filters, shows inputs on request, and purges one or many", async () => {
    const running = await call('PUT', groupPath('to-purge'), { body: groupBody });
    const id = running.headers['x-orchestration-id'] as string;
    expect((await call('DELETE', `orchestrations/${id}`)).json).toMatchObject({ error: { code: 'OrchestrationRunning' } });
    expect((await call('GET', `orchestrations/${id}?gateway-wait=15`)).json).toMatchObject({ runtimeStatus: 'Completed' });

    const byPrefix = await call('GET', `orchestrations?instanceIdPrefix=${id.slice(0, 8)}&name=ContainerGroups_CreateOrUpdate&showInput=true`);
    expect(byPrefix.json).toMatchObject({ value: [{ id, runtimeStatus: 'Completed', input: { method: 'PUT' } }] });
    const future = await call('GET', 'orchestrations?createdTimeFrom=2099-01-01');
    expect(future.json).toEqual({ value: [] });

    expect(await call('DELETE', `orchestrations/${id}`)).toMatchObject({ status: 200, json: { instancesDeleted: 1 } });
    expect((await call('DELETE', `orchestrations/${id}`)).status).toBe(404);
    expect((await call('GET', `orchestrations/${id}`)).status).toBe(404);

    const purged = await call('DELETE', 'orchestrations?runtimeStatus=Completed,Failed,Terminated');
    expect(purged.status).toBe(200);
    expect(purged.json!.instancesDeleted).toBeGreaterThan(0);
    expect((await call('GET', 'orchestrations?runtimeStatus=Completed')).json).toEqual({ value: [] });
    expect((await call('DELETE', 'orchestrations')).status).toBe(400);
    expect((await call('DELETE', 'orchestrations?runtimeStatus=Running')).status).toBe(400);
  });

  it('describes every route in openapi.json, and at LOG_LEVEL=debug each poller run leaves one line', async () => {
    const document = (await call('GET', 'openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(document.paths['/orchestrations']!)).toEqual(expect.arrayContaining(['get', 'delete']));
    expect(Object.keys(document.paths['/orchestrations/{id}']!)).toEqual(expect.arrayContaining(['get', 'delete']));
    const sweeps = gateway.app.lines
      .map((line) => /(\{"event":"sweep".*\})/.exec(line)?.[1])
      .filter((json): json is string => json !== undefined)
      .map((json) => JSON.parse(json) as Record<string, unknown>);
    expect(sweeps.length).toBeGreaterThan(3);
    expect(sweeps[0]).toEqual(
      expect.objectContaining({
        event: 'sweep',
        durationMs: expect.any(Number),
        due: expect.any(Number),
        polled: expect.any(Number),
        delivered: expect.any(Number),
        purged: expect.any(Number),
        reconciled: expect.any(Number),
        janitorScanned: expect.any(Number),
      }),
    );
  });
});
