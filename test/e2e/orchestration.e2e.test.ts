/**
 * Long-running calls through the app over HTTP: an ARM-style poller that follows Location to
 * the final resource, duplicate starts, status documents, terminate; then two host processes
 * sharing one Azurite, and a host killed mid-operation.
 */
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const subscription = '00000000-0000-0000-0000-000000000000';
const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const groupBody = (image = 'nginx') => JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image } }] } });
const fastPolling = { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', LRO_DEFAULT_POLL_SECONDS: '1' };

async function put(baseUrl: string, name: string, body = groupBody()) {
  const response = await request(`${baseUrl}/api/${groupPath(name)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
  return { status: response.statusCode, headers: response.headers, json: (await response.body.json()) as Record<string, unknown> };
}

async function getJson(url: string) {
  const response = await request(url);
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** What an ARM client does: GET Location, wait Retry-After while 202, until another status. */
async function followLocation(location: string, limitMs = 20_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const answer = await getJson(location);
    if (answer.status !== 202) return answer;
    if (Date.now() > deadline) throw new Error(`Still 202 after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
  }
}

async function waitForStatus(baseUrl: string, ids: string[], status: string, limitMs = 25_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const statuses = await Promise.all(ids.map(async (id) => (await getJson(`${baseUrl}/api/orchestrations/${id}`)).json?.runtimeStatus));
    if (statuses.every((current) => current === status)) return;
    if (Date.now() > deadline) throw new Error(`Not all ${status}: ${statuses.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

describe('one host', () => {
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway(fastPolling, { lroSteps: 2, retryAfterSeconds: 1 });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it('answers at once with Location on the app, and an ARM poller following it ends with the resource', async () => {
    const started = await put(gateway.app.url, 'arm-poller');
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ properties: { provisioningState: 'Pending' } });
    const id = started.headers['x-orchestration-id'] as string;
    expect(started.headers.location).toBe(`${gateway.app.url}/api/operations/${id}`);
    expect(Number(started.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(started.headers.link).toContain(`${gateway.app.url}/api/orchestrations/${id}`);

    const final = await followLocation(started.headers.location as string);
    expect(final.status).toBe(200);
    expect(final.json).toMatchObject({ name: 'arm-poller', properties: { provisioningState: 'Succeeded' } });

    const status = await getJson(`${gateway.app.url}/api/orchestrations/${id}`);
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({
      id,
      name: 'ContainerGroups_CreateOrUpdate',
      runtimeStatus: 'Completed',
      customStatus: { upstreamState: 'Succeeded' },
      output: { status: 200 },
      statusQueryGetUri: `${gateway.app.url}/api/orchestrations/${id}`,
      terminatePostUri: `${gateway.app.url}/api/orchestrations/${id}/terminate`,
    });
    expect(status.json).toHaveProperty('createdTime');
    expect(status.json).toHaveProperty('lastUpdatedTime');
  });

  it('gives a failing deployment’s error at the end of the Location chain', async () => {
    const started = await put(gateway.app.url, 'will-fail', groupBody('registry.example/fail:1'));
    const final = await followLocation(started.headers.location as string);
    expect(final.status).toBe(400);
    expect(final.json).toMatchObject({ error: { code: 'DeploymentFailed' } });
  });

  it('returns the same orchestration for the same request fired twice at once; the upstream sees one PUT', async () => {
    gateway.emulator.reset();
    const [first, second] = await Promise.all([put(gateway.app.url, 'chatops'), put(gateway.app.url, 'chatops')]);
    expect(first.headers['x-orchestration-id']).toBe(second.headers['x-orchestration-id']);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
    expect([first.status, second.status]).toEqual([201, 201]);
  });

  it('terminates, answers 410 to a second terminate, lists by runtimeStatus, and refuses unknown ones', async () => {
    const started = await put(gateway.app.url, 'to-terminate', groupBody('nginx:terminate'));
    const id = started.headers['x-orchestration-id'] as string;
    const terminated = await request(`${gateway.app.url}/api/orchestrations/${id}/terminate`, { method: 'POST' });
    expect(terminated.statusCode).toBe(202);
    expect(await terminated.body.json()).toMatchObject({ runtimeStatus: 'Terminated' });
    // As Durable Functions: terminating an instance that already ended is 410 Gone, and changes nothing.
    const again = await request(`${gateway.app.url}/api/orchestrations/${id}/terminate?reason=again`, { method: 'POST' });
    expect(again.statusCode).toBe(410);
    expect(await again.body.json()).toMatchObject({
      error: { code: 'OrchestrationEnded', message: expect.stringMatching(/already ended \(Terminated at .+\): there is nothing to terminate/), target: 'id' },
    });
    expect((await getJson(`${gateway.app.url}/api/orchestrations/${id}`)).json).toMatchObject({
      runtimeStatus: 'Terminated',
      failure: { message: 'Terminated by a caller.' },
    });
    const listed = await getJson(`${gateway.app.url}/api/orchestrations?runtimeStatus=Terminated`);
    expect((listed.json!.value as { id: string }[]).map((entry) => entry.id)).toContain(id);
    const operation = await getJson(`${gateway.app.url}/api/operations/${id}`);
    expect(operation.status).toBe(409);
    expect(operation.json).toMatchObject({ error: { code: 'OrchestrationTerminated' } });
    const bad = await getJson(`${gateway.app.url}/api/orchestrations?runtimeStatus=Sleeping`);
    expect(bad.status).toBe(400);
    const missing = await getJson(`${gateway.app.url}/api/orchestrations/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
  });
});

describe('two hosts sharing one storage', () => {
  let gateway: GatewayFixture;
  let second: AppProcess;
  beforeAll(async () => {
    gateway = await startGateway(fastPolling, { lroSteps: 2, retryAfterSeconds: 1 });
    second = await startApp(gateway.env);
    gateway.others.push(second);
  });
  afterAll(async () => {
    await second.stop();
    await gateway.stop();
  });

  it('complete N concurrent orchestrations with no upstream poll made twice', async () => {
    const count = 10;
    const started = await Promise.all(Array.from({ length: count }, (_unused, index) => put(index % 2 === 0 ? gateway.app.url : second.url, `pair-${index}`)));
    const ids = started.map((answer) => answer.headers['x-orchestration-id'] as string);
    await waitForStatus(gateway.app.url, ids, 'Completed');
    // lroSteps = 2: two Location reads and one final GET each, whoever polled.
    expect(gateway.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2 * count);
    for (let index = 0; index < count; index += 1) {
      expect(gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: `/containerGroups/pair-${index}` })).toHaveLength(1);
    }
  });
});

describe('a host killed mid-operation', () => {
  let gateway: GatewayFixture;
  let restarted: AppProcess | undefined;
  beforeAll(async () => {
    // Slow upstream polling so the operations are surely unfinished when the host dies.
    gateway = await startGateway(fastPolling, { lroSteps: 3, retryAfterSeconds: 2 });
  });
  afterAll(async () => {
    await restarted?.stop();
    await gateway.stop();
  });

  it('loses nothing: started again, the host finishes the operations', async () => {
    const started = await Promise.all([0, 1, 2].map((index) => put(gateway.app.url, `crash-${index}`)));
    const ids = started.map((answer) => answer.headers['x-orchestration-id'] as string);
    await gateway.app.kill();
    restarted = await startApp(gateway.env);
    gateway.others.push(restarted);
    await waitForStatus(restarted.url, ids, 'Completed', 90_000);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(3);
    // A new process start and the polls' own waits: more than jest's default on a busy machine.
  }, 120_000);
});
