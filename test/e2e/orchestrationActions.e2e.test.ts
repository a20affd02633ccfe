/**
 * Restart, bulk terminate and restart by filter, and counts by status, through the built app on
 * the local host against the emulator and Azurite, with an access policy: a restart is a start
 * (answered as one, judged by the rules as they are now, linked both ways, one restart of an
 * original winning a race), a request whose secrets were redacted is not replayed, bulk actions
 * act on what the caller may act on only, ORCHESTRATION_BULK_BATCH at a time with a dry run, and
 * counts say when they stopped at the scan bound. A second instance on the same storage stands
 * for the app after its settings changed (a rule taken away, a small scan bound).
 */
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(180_000);

const subscription = '00000000-0000-0000-0000-000000000000';
const keys = { operator: 'actions-operator-key-0001', alice: 'actions-alice-key-0001', bob: 'actions-bob-key-0001', auditor: 'actions-auditor-key-0001' };
const rules = (aliceMay: string[]) =>
  JSON.stringify([
    { callers: [keyFingerprintOf(keys.operator)], allow: ['read', 'write', 'admin'] },
    { callers: [keyFingerprintOf(keys.alice)], allow: aliceMay },
    { callers: [keyFingerprintOf(keys.bob)], allow: ['read', 'write'] },
    // Sees every orchestration and may call the restart route, but not the operations themselves.
    { callers: [keyFingerprintOf(keys.auditor)], allow: ['read', 'admin', 'orchestrations-restart'] },
  ]);

let gateway: GatewayFixture;
/** The same app after its settings changed: Alice may no longer write, and a query reads two documents at most. */
let later: AppProcess;

beforeAll(async () => {
  gateway = await startGateway(
    {
      LOCAL_HOST_KEYS: JSON.stringify(keys),
      ACCESS_POLICY: rules(['read', 'write']),
      LOCAL_HOST_TIMERS: 'off',
      GATEWAY_WAIT_MAX_SECONDS: '30',
      ORCHESTRATION_BULK_BATCH: '2',
    },
    { lroSteps: 1, retryAfterSeconds: 1 },
  );
  later = await startApp({ ...gateway.env, ACCESS_POLICY: rules(['read', 'orchestrations-restart']), ORCHESTRATION_QUERY_MAX_SCANNED: '2' });
  gateway.others.push(later);
});
afterAll(async () => {
  await later?.stop();
  await gateway?.stop();
});

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> };

async function api(
  key: keyof typeof keys,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; base?: string } = {},
): Promise<Answer> {
  const url = `${options.base ?? gateway.app.url}/api/${path}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const response = await request(url, {
    method: method as 'GET',
    body,
    headers: { 'x-functions-key': keys[key], ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers },
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;

/** A container group start (an image naming "fail" makes the emulator fail it); its orchestration id. */
async function startGroup(key: keyof typeof keys, name: string, container: Record<string, unknown> = { image: 'nginx' }): Promise<string> {
  const started = await api(key, 'PUT', groupPath(name), {
    body: { location: 'westus', properties: { containers: [{ name: 'web', properties: container }] } },
  });
  expect(started.status).toBe(201);
  return started.headers['x-orchestration-id'] as string;
}

async function ended(key: keyof typeof keys, id: string): Promise<Record<string, unknown>> {
  const answer = await api(key, 'GET', `orchestrations/${id}?gateway-wait=30`);
  expect(answer.status).toBe(200);
  return answer.body;
}

/** Every page of a bulk call, following its continuation token. */
async function everyBatch(key: keyof typeof keys, path: string): Promise<Record<string, unknown>[]> {
  const answers: Record<string, unknown>[] = [];
  let token: string | undefined;
  for (let calls = 0; calls < 20; calls += 1) {
    const answer = await api(key, 'POST', path, { headers: token ? { 'x-ms-continuation-token': token } : {} });
    expect(answer.status).toBe(200);
    answers.push(answer.body);
    token = answer.headers['x-ms-continuation-token'] as string | undefined;
    if (!token) return answers;
  }
  throw new Error('The bulk action did not end in 20 calls.');
}

describe('restart', () => {
  it('starts an ended request again, answered as a start, linked both ways; not while it runs, and once', async () => {
    const failed = await startGroup('alice', 'restart-me', { image: 'fail-image' });
    expect(await ended('alice', failed)).toMatchObject({ runtimeStatus: 'Failed' });
    const running = await startGroup('alice', 'restart-running');
    expect(await api('alice', 'POST', `orchestrations/${running}/restart`)).toMatchObject({ status: 409, body: { error: { code: 'OrchestrationRunning' } } });

    const restarted = await api('alice', 'POST', `orchestrations/${failed}/restart`);
    // The group exists since the first start: the upstream answers the same PUT 200 (an update).
    expect(restarted.status).toBe(200);
    const newId = restarted.headers['x-orchestration-id'] as string;
    expect(newId).toMatch(/^[0-9a-f-]{36}$/);
    expect(newId).not.toBe(failed);
    expect(restarted.headers.location).toBe(gateway.api(`operations/${newId}`));
    expect(await ended('alice', newId)).toMatchObject({
      runtimeStatus: 'Failed',
      restartedFrom: failed,
      startedBy: keyFingerprintOf(keys.alice),
      input: { method: 'PUT' },
    });
    expect((await api('alice', 'GET', `orchestrations/${failed}`)).body).toMatchObject({ restartedAs: newId });
    expect(gateway.emulator.upstreamRequests({ method: 'PUT', pathIncludes: '/containerGroups/restart-me' })).toHaveLength(2);

    expect(await api('alice', 'POST', `orchestrations/${failed}/restart`)).toMatchObject({
      status: 409,
      body: { error: { code: 'Conflict', message: expect.stringContaining(newId) } },
    });
    // Another caller's orchestration is one that does not exist.
    expect((await api('bob', 'POST', `orchestrations/${newId}/restart`)).status).toBe(404);
  });

  it('lets one of two restarts racing on one original win; the other is refused and sends nothing', async () => {
    const original = await startGroup('alice', 'restart-race');
    await ended('alice', original);
    gateway.emulator.reset();
    const answers = await Promise.all([0, 1].map(() => api('alice', 'POST', `orchestrations/${original}/restart`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const winner = answers.find((answer) => answer.status === 201)!.headers['x-orchestration-id'];
    expect((await api('alice', 'GET', `orchestrations/${original}`)).body).toMatchObject({ restartedAs: winner });
    expect(gateway.emulator.upstreamRequests({ method: 'PUT', pathIncludes: '/containerGroups/restart-race' })).toHaveLength(1);
  });

  it('refuses a request whose stored body had its secrets redacted, saying to send it again', async () => {
    const original = await startGroup('alice', 'restart-secret', {
      image: 'nginx',
      environmentVariables: [{ name: 'DB_PASSWORD', secureValue: 'not-for-storage-0001' }],
    });
    await ended('alice', original);
    gateway.emulator.reset();
    const refused = await api('alice', 'POST', `orchestrations/${original}/restart`);
    expect(refused).toMatchObject({
      status: 409,
      body: { error: { code: 'Conflict', target: 'input.body', message: expect.stringMatching(/send the request again/) } },
    });
    expect(gateway.emulator.upstreamRequests()).toEqual([]);
    expect((await api('alice', 'GET', `orchestrations/${original}`)).body.restartedAs).toBeUndefined();
  });

  it('judges the caller by the rules as they are now, and leaves the original unlinked when refused', async () => {
    const byOperator = await startGroup('operator', 'restart-rights');
    await ended('operator', byOperator);
    // The auditor sees it and may call the route, but no rule lets it create container groups.
    expect(await api('auditor', 'POST', `orchestrations/${byOperator}/restart`)).toMatchObject({
      status: 403,
      body: { error: { code: 'OperationNotAllowed' } },
    });
    const own = await startGroup('alice', 'restart-revoked');
    await ended('alice', own);
    // The app started again with Alice's write taken away: her own orchestration is refused too.
    const refused = await api('alice', 'POST', `orchestrations/${own}/restart`, { base: later.url });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'OperationNotAllowed', target: 'ContainerGroups_CreateOrUpdate' } } });
    for (const id of [byOperator, own]) expect((await api('operator', 'GET', `orchestrations/${id}`)).body.restartedAs).toBeUndefined();
    // A restart once refused may be made when the rules allow it again.
    expect((await api('alice', 'POST', `orchestrations/${own}/restart`)).status).toBe(200);
  });
});

describe('bulk actions by filter', () => {
  it('needs a filter, and takes only the statuses the action acts on', async () => {
    expect(await api('alice', 'POST', 'orchestrations/terminate')).toMatchObject({ status: 400, body: { error: { code: 'InvalidRequest' } } });
    expect((await api('alice', 'POST', 'orchestrations/restart?runtimeStatus=Running')).status).toBe(400);
    expect((await api('alice', 'POST', 'orchestrations/terminate?runtimeStatus=Completed')).status).toBe(400);
  });

  it('terminates what the caller may act on, a batch at a time, after a dry run that changed nothing', async () => {
    const from = new Date().toISOString();
    const alices = [await startGroup('alice', 'bulk-a1'), await startGroup('alice', 'bulk-a2'), await startGroup('alice', 'bulk-a3')];
    const bobs = await startGroup('bob', 'bulk-b1');
    const filter = `runtimeStatus=Running&createdTimeFrom=${encodeURIComponent(from)}`;

    const dryRuns = await everyBatch('alice', `orchestrations/terminate?${filter}&dryRun=true`);
    expect(dryRuns.map((answer) => answer.count)).toEqual([2, 1]);
    expect(dryRuns.flatMap((answer) => answer.instanceIds as string[]).sort()).toEqual([...alices].sort());
    for (const id of [...alices, bobs]) expect((await api('operator', 'GET', `orchestrations/${id}`)).body.runtimeStatus).toBe('Running');

    const done = await everyBatch('alice', `orchestrations/terminate?${filter}`);
    const results = done.flatMap((answer) => answer.results as { instanceId: string; status: number }[]);
    expect(results.map((result) => result.instanceId).sort()).toEqual([...alices].sort());
    expect(results.every((result) => result.status === 202)).toBe(true);
    for (const id of alices) expect((await api('alice', 'GET', `orchestrations/${id}`)).body.runtimeStatus).toBe('Terminated');
    expect((await api('bob', 'GET', `orchestrations/${bobs}`)).body.runtimeStatus).toBe('Running');

    // Restarted in bulk: each is a start of its own, and the new ones (running) are not picked up by
    // later batches. A gateway-wait holds no restart of a bulk one: each answers at once (still Running).
    const restarts = await everyBatch('alice', `orchestrations/restart?runtimeStatus=Terminated&createdTimeFrom=${encodeURIComponent(from)}&gateway-wait=30`);
    const restarted = restarts.flatMap((answer) => answer.results as { instanceId: string; status: number; restartedAs: string }[]);
    expect(restarted.map((result) => result.instanceId).sort()).toEqual([...alices].sort());
    for (const result of restarted) {
      expect(result.status).toBe(200);
      expect((await api('alice', 'GET', `orchestrations/${result.restartedAs}`)).body).toMatchObject({
        runtimeStatus: 'Running',
        restartedFrom: result.instanceId,
      });
    }
    // The operator, with admin, sees and terminates everyone's.
    const everyone = await everyBatch('operator', `orchestrations/terminate?${filter}&dryRun=true`);
    expect(everyone.flatMap((answer) => answer.instanceIds as string[])).toEqual(
      expect.arrayContaining([bobs, ...restarted.map((result) => result.restartedAs)]),
    );
  });
});

describe('counts', () => {
  it('counts by status what the caller sees, and says when it stopped at the scan bound', async () => {
    const all = await api('operator', 'GET', 'orchestrations/counts');
    expect(all).toMatchObject({ status: 200, body: { complete: true } });
    const counts = all.body.counts as Record<string, number>;
    expect(Object.keys(counts).sort()).toEqual(['Completed', 'Failed', 'Pending', 'Running', 'Terminated']);
    const listed = (await api('operator', 'GET', 'orchestrations?top=1000')).body.value as { runtimeStatus: string }[];
    for (const status of Object.keys(counts)) expect(counts[status]).toBe(listed.filter((entry) => entry.runtimeStatus === status).length);

    const bobs = (await api('bob', 'GET', 'orchestrations/counts?runtimeStatus=Running')).body;
    expect(bobs).toEqual({ counts: { Pending: 0, Running: 1, Completed: 0, Failed: 0, Terminated: 0 }, complete: true });
    expect((await api('bob', 'GET', 'orchestrations/counts?runtimeStatus=Sleeping')).status).toBe(400);

    const bounded = await api('operator', 'GET', 'orchestrations/counts', { base: later.url });
    expect(bounded.body.complete).toBe(false);
    expect(Object.values(bounded.body.counts as Record<string, number>).reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(2);
    expect(bounded.headers['x-ms-continuation-token']).toEqual(expect.any(String));
  });

  it('describes the new routes in openapi.json', async () => {
    const paths = (await api('operator', 'GET', 'openapi.json')).body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/orchestrations/counts']!)).toEqual(['get']);
    expect(Object.keys(paths['/orchestrations/{id}/restart']!)).toEqual(['post']);
    expect(Object.keys(paths['/orchestrations/terminate']!)).toEqual(['post']);
    expect(Object.keys(paths['/orchestrations/restart']!)).toEqual(['post']);
  });
});
