/**
 * The orchestration engine against the emulator and Azurite over loopback, with a clock the
 * test moves: each long-running operation from start to its end, failures, duplicates,
 * deadlines, terminate, purge, polling faults, and two engines sharing one store.
 */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import {
  defaultOrchestrationSettings,
  engineOnContainer,
  type OrchestrationEngine,
  type OrchestrationSettings,
  type StartRequest,
} from '../../src/orchestration/orchestrationEngine';
import type { RuntimeStatus } from '../../src/orchestration/orchestrationState';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { startEmulator, type Emulator } from '../../tools/emulator/emulatorServer';

const token = 'emulator-token';
const subscription = '00000000-0000-0000-0000-000000000000';
const secureValue = 'do-not-store-me-5521';

let emulator: Emulator;
let azurite: RunningAzurite;
let clock = Date.parse('2026-06-01T00:00:00Z');
const logs: string[] = [];

function makeEngine(container: string, now: () => number = () => clock, settings: Partial<OrchestrationSettings> = {}): OrchestrationEngine {
  const blobService = BlobServiceClient.fromConnectionString(azurite.connectionString);
  return engineOnContainer(blobService.getContainerClient(container), {
    storageTimeoutMs: 5000,
    upstream: new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    settings: {
      ...defaultOrchestrationSettings,
      pollInterval: { defaultMs: 5000, floorMs: 1000, ceilingMs: 60_000 },
      deadlineMs: {},
      defaultDeadlineMs: 10 * 60_000,
      retentionMs: 3600_000,
      ...settings,
    },
    now,
    log: (line) => logs.push(line),
  });
}

let engine: OrchestrationEngine;

/** The ids of the orchestrations in `status`, as the list route finds them. */
async function idsWith(status: RuntimeStatus, target = engine): Promise<string[]> {
  return (await target.query({ statuses: [status], top: 1000, maxScanned: 10_000, timeBudgetMs: 5000 })).summaries.map((summary) => summary.id);
}
let containerName: string;

beforeAll(async () => {
  emulator = await startEmulator({ token, lroSteps: 2, retryAfterSeconds: 2 });
  azurite = await startAzurite();
});
afterAll(async () => {
  await emulator.close();
  await azurite.close();
});
beforeEach(() => {
  emulator.reset();
  containerName = `t${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  engine = makeEngine(containerName);
});

function request(name: string, method: string, path: string, body?: unknown, apiVersion = '2025-09-01'): StartRequest {
  const url = `${emulator.url}/${path}?api-version=${apiVersion}`;
  return {
    name,
    method,
    path,
    query: [['api-version', apiVersion]],
    bodyText: body === undefined ? undefined : JSON.stringify(body),
    bodyValue: body,
    resourceUrl: url,
  };
}

function sendFor(start: StartRequest) {
  return () =>
    new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 2000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).send({
      method: start.method,
      url: start.resourceUrl,
      token,
      body: start.bodyText,
      headers: start.bodyText ? { 'content-type': 'application/json' } : {},
    });
}

const group = (image = 'nginx') => ({
  location: 'westus',
  properties: { containers: [{ name: 'web', properties: { image, environmentVariables: [{ name: 'DB_PASSWORD', secureValue }] } }] },
});
const groupRequest = (name = 'web', image?: string) =>
  request(
    'ContainerGroups_CreateOrUpdate',
    'PUT',
    `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}`,
    group(image),
  );

/** Moves the clock past the next poll and runs one sweep; returns how many were polled. */
async function tick(target = engine, ms = 2000) {
  clock += ms;
  return (await target.sweep(token)).polled;
}

async function runToEnd(id: string, maxTicks = 10) {
  for (let index = 0; index < maxTicks; index += 1) {
    const state = await engine.get(id);
    if (state && !['Pending', 'Running'].includes(state.runtimeStatus)) return state;
    await tick();
  }
  return engine.get(id);
}

/**
 * A migration whose first answer names both Azure-AsyncOperation and Location, its status
 * answering each of `statuses` in turn; what its Location (`resultPath`) answers is
 * scripted by the test.
 */
function migrationFollowingBoth(name: string, statuses: string[]) {
  const service = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim-${name}`;
  const statusUrl = `${emulator.url}/subscriptions/${subscription}/providers/Vendor.ApiManagement/locations/westus/operationStatuses/op-${name}?api-version=2024-05-01`;
  const resultUrl = `${emulator.url}/${service}/operationresults/op-${name}?api-version=2024-05-01`;
  emulator.script({
    kind: 'answer',
    method: 'POST',
    pathPattern: 'migrateToStv2$',
    status: 202,
    headers: { 'azure-asyncoperation': statusUrl, location: resultUrl, 'retry-after': '1' },
  });
  for (const status of statuses)
    emulator.script({ kind: 'answer', method: 'GET', pathPattern: `operationStatuses/op-${name}$`, status: 200, body: { status } });
  const start = request('ApiManagementService_MigrateToStv2', 'POST', `${service}/migrateToStv2`, { mode: 'NewIP' }, '2024-05-01');
  return { statusUrl, resultUrl, resultPath: `operationresults/op-${name}$`, start };
}

describe('OrchestrationEngine', () => {
  it('follows a container group create through Location to Completed, with the resource as output', async () => {
    const start = groupRequest();
    const outcome = await engine.start(start, sendFor(start));
    expect(outcome.kind).toBe('running');
    expect(outcome.state).toMatchObject({ runtimeStatus: 'Running', poll: { mode: 'location', nextPollAt: clock + 2000 } });

    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { name: 'web', properties: { provisioningState: 'Succeeded' } } } });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
    expect(emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/web' })).toHaveLength(1);
    expect(emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
  });

  it('keeps the upstream error of a failing deployment', async () => {
    const start = groupRequest('broken', 'registry.example/fail:1');
    const outcome = await engine.start(start, sendFor(start));
    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Failed', output: { status: 400, body: { error: { code: 'DeploymentFailed' } } } });
  });

  it('follows a private endpoint connection on the resource itself', async () => {
    const start = request(
      'PrivateEndpointConnections_CreateOrUpdate',
      'PUT',
      `subscriptions/sub1/resourceGroups/rg/providers/Vendor.EventHub/namespaces/sdk-Namespace-2924/privateEndpointConnections/pec1`,
      { properties: { privateLinkServiceConnectionState: { status: 'Approved' } } },
      '2026-01-01',
    );
    const outcome = await engine.start(start, sendFor(start));
    expect(outcome.state.poll?.mode).toBe('resource');
    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { properties: { provisioningState: 'Succeeded' } } } });
  });

  it('takes the migration result from its Location', async () => {
    const start = request(
      'ApiManagementService_MigrateToStv2',
      'POST',
      `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2`,
      { mode: 'NewIP' },
      '2024-05-01',
    );
    const outcome = await engine.start(start, sendFor(start));
    expect(outcome.kind === 'running' && outcome.response.status).toBe(202);
    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { properties: { platformVersion: 'stv2' } } } });
  });

  it("takes a POST's result from its Location when the answer names an Azure-AsyncOperation to follow too (final-state-via: location)", async () => {
    const { statusUrl, resultPath, start } = migrationFollowingBoth('both', ['InProgress', 'Succeeded']);
    emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: resultPath,
      status: 200,
      body: { name: 'apim-both', properties: { provisioningState: 'Succeeded', platformVersion: 'stv2' } },
    });
    const outcome = await engine.start(start, sendFor(start));
    expect(outcome.state.poll).toMatchObject({ mode: 'azure-async-operation', url: statusUrl });
    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { name: 'apim-both', properties: { platformVersion: 'stv2' } } } });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationStatuses/' })).toHaveLength(2);
    expect(emulator.upstreamRequests({ pathIncludes: '/operationresults/' })).toHaveLength(1);
  });

  it("reads a POST's result again on its Location while it answers 202 after the status said Succeeded, as a running read that waits as asked", async () => {
    const { resultUrl, resultPath, start } = migrationFollowingBoth('late', ['Succeeded']);
    emulator.script({ kind: 'answer', method: 'GET', pathPattern: resultPath, status: 202, headers: { 'retry-after': '7' } });
    emulator.script({ kind: 'answer', method: 'GET', pathPattern: resultPath, status: 202, headers: { 'retry-after': '3' } });
    emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: resultPath,
      status: 200,
      body: { name: 'apim-late', properties: { platformVersion: 'stv2' } },
    });
    const outcome = await engine.start(start, sendFor(start));
    const notReady = {
      runtimeStatus: 'Running',
      customStatus: {
        upstreamState: 'Succeeded',
        lastReadStatus: 202,
        message: 'The operation succeeded upstream; its result is not ready yet (202); reading it again.',
      },
    };

    expect(await tick()).toBe(1);
    expect(await engine.get(outcome.state.id)).toMatchObject({
      ...notReady,
      poll: { mode: 'location', url: resultUrl, failedReads: 0, pollCount: 1, nextPollAt: clock + 7000 },
    });
    expect(await tick(engine, 7000)).toBe(1);
    expect(await engine.get(outcome.state.id)).toMatchObject({
      ...notReady,
      poll: { mode: 'location', url: resultUrl, failedReads: 0, pollCount: 2, nextPollAt: clock + 3000 },
    });
    expect(await tick(engine, 3000)).toBe(1);
    expect(await engine.get(outcome.state.id)).toMatchObject({
      runtimeStatus: 'Completed',
      output: { status: 200, body: { name: 'apim-late', properties: { platformVersion: 'stv2' } } },
      customStatus: { upstreamState: 'Succeeded' },
    });
    // The status was read once: once it said Succeeded, only the result is read.
    expect(emulator.upstreamRequests({ pathIncludes: '/operationStatuses/' })).toHaveLength(1);
    expect(emulator.upstreamRequests({ pathIncludes: '/operationresults/' })).toHaveLength(3);
  });

  it("reads a POST's result, not its status again, after a failed read of the result once the status said Succeeded", async () => {
    const { resultUrl, resultPath, start } = migrationFollowingBoth('busy', ['Succeeded']);
    emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: resultPath,
      status: 503,
      body: { error: { code: 'ServiceUnavailable', message: 'Try again.' } },
    });
    emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: resultPath,
      status: 200,
      body: { name: 'apim-busy', properties: { platformVersion: 'stv2' } },
    });
    const outcome = await engine.start(start, sendFor(start));

    await tick();
    expect(await engine.get(outcome.state.id)).toMatchObject({
      runtimeStatus: 'Running',
      customStatus: { upstreamState: 'Succeeded', lastReadStatus: 503, message: 'The result read failed (503); retrying.' },
      poll: { mode: 'location', url: resultUrl, failedReads: 1 },
    });
    const final = await runToEnd(outcome.state.id);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { name: 'apim-busy' } } });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationStatuses/' })).toHaveLength(1);
    expect(emulator.upstreamRequests({ pathIncludes: '/operationresults/' })).toHaveLength(2);
  });

  it('returns the running orchestration for a repeated start, and the upstream sees one call', async () => {
    const start = groupRequest('twice');
    const first = await engine.start(start, sendFor(start));
    const second = await engine.start(start, sendFor(start));
    expect(second).toMatchObject({ kind: 'duplicate', state: { id: first.state.id } });
    expect(emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);

    await runToEnd(first.state.id);
    const third = await engine.start(start, sendFor(start));
    expect(third.kind).toBe('running');
    expect(third.state.id).not.toBe(first.state.id);
  });

  it('keeps secrets from the request out of the stored state', async () => {
    const start = groupRequest('secret');
    const outcome = await engine.start(start, sendFor(start));
    const blob = await BlobServiceClient.fromConnectionString(azurite.connectionString)
      .getContainerClient(containerName)
      .getBlockBlobClient(`instances/${outcome.state.id}.json`)
      .downloadToBuffer();
    expect(blob.toString()).not.toContain(secureValue);
    expect(blob.toString()).toContain('[redacted]');
    expect(logs.join('\n')).not.toContain(secureValue);
  });

  it('delays the poll on a 503 or a reset, and still completes', async () => {
    const start = groupRequest('bumpy');
    const outcome = await engine.start(start, sendFor(start));
    emulator.script({ kind: 'answer', status: 503, pathPattern: 'operationResults' });
    await tick();
    let state = await engine.get(outcome.state.id);
    expect(state).toMatchObject({ runtimeStatus: 'Running', poll: { failedReads: 1 } });
    emulator.script({ kind: 'reset', pathPattern: 'operationResults' });
    await tick(engine, 5000);
    state = await engine.get(outcome.state.id);
    expect(state).toMatchObject({ runtimeStatus: 'Running', poll: { failedReads: 2 } });
    const final = await runToEnd(outcome.state.id, 20);
    expect(final?.runtimeStatus).toBe('Completed');
  });

  it("waits as long as the final read of a PUT's resource asks when it is throttled, then completes", async () => {
    const start = groupRequest('throttled-at-the-end');
    const outcome = await engine.start(start, sendFor(start));
    emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: 'containerGroups/throttled-at-the-end$',
      status: 429,
      headers: { 'retry-after': '30' },
      body: { error: { code: 'TooManyRequests', message: 'Throttled.' } },
    });
    const finalReads = () => emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/throttled-at-the-end' }).length;
    for (let ticks = 0; ticks < 10 && finalReads() === 0; ticks += 1) await tick();
    expect(finalReads()).toBe(1);
    // The status said Succeeded, the resource's read was throttled: the next read comes when the upstream asked.
    expect(await engine.get(outcome.state.id)).toMatchObject({
      runtimeStatus: 'Running',
      customStatus: { lastReadStatus: 429 },
      poll: { nextPollAt: clock + 30_000 },
    });
    const final = await runToEnd(outcome.state.id, 40);
    expect(final).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { name: 'throttled-at-the-end' } } });
  });

  it.each([401, 403])("backs off, as the upstream asks, when it refuses the app's own token (%i): no read at every run", async (status) => {
    const start = groupRequest(`refused-${status}`);
    const outcome = await engine.start(start, sendFor(start));
    emulator.script({
      kind: 'answer',
      status,
      pathPattern: 'operationResults',
      headers: { 'retry-after': '30' },
      body: { error: { code: 'AuthorizationFailed', message: 'No access.' } },
    });
    expect(await tick()).toBe(1);
    expect(await engine.get(outcome.state.id)).toMatchObject({
      runtimeStatus: 'Running',
      customStatus: { lastReadStatus: status },
      poll: { failedReads: 1, nextPollAt: clock + 30_000 },
    });
    // The runs before then read nothing; the one after reads again, and the operation goes on.
    expect(await tick()).toBe(0);
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(1);
    const final = await runToEnd(outcome.state.id, 40);
    expect(final?.runtimeStatus).toBe('Completed');
  });

  it('fails with DeadlineExceeded once the deadline passes', async () => {
    const start = groupRequest('slow');
    const outcome = await engine.start(start, sendFor(start));
    clock += 11 * 60_000;
    await engine.sweep(token);
    expect(await engine.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'DeadlineExceeded' } });
  });

  it('terminates, lists by status, and purges finished ones after the retention', async () => {
    const start = groupRequest('stop-me');
    const outcome = await engine.start(start, sendFor(start));
    expect((await engine.terminate(outcome.state.id, 'not needed')).runtimeStatus).toBe('Terminated');
    await expect(engine.terminate(outcome.state.id, 'again')).rejects.toMatchObject({ code: 'OrchestrationEnded', status: 410 });
    expect(await tick()).toBe(0);
    expect(emulator.upstreamRequests({ method: 'GET' })).toHaveLength(0);
    expect(await idsWith('Terminated')).toEqual([outcome.state.id]);
    expect(await idsWith('Running')).toEqual([]);

    clock += 2 * 3600_000;
    expect(await engine.sweep(token)).toMatchObject({ polled: 0, purged: 1 });
    expect(await engine.get(outcome.state.id)).toBeUndefined();
  });

  it('keeps a terminate that lands while the start still waits for the upstream', async () => {
    const start = groupRequest('terminated-early');
    let release!: () => void;
    const upstreamAnswered = new Promise<void>((resolve) => (release = resolve));
    const starting = engine.start(start, async () => {
      await upstreamAnswered;
      return sendFor(start)();
    });
    let pending: string | undefined;
    for (let attempt = 0; attempt < 50 && !pending; attempt += 1) {
      pending = (await idsWith('Pending'))[0];
      if (!pending) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await engine.terminate(pending!, 'changed my mind');
    release();
    const outcome = await starting;
    expect(outcome.state.runtimeStatus).toBe('Terminated');
    expect((await engine.get(pending!))?.runtimeStatus).toBe('Terminated');
  });

  it('refuses a POST poll URL on another origin, and follows a PUT on its resource instead', async () => {
    emulator.script({ kind: 'answer', method: 'POST', status: 202, headers: { location: 'https://evil.example.com/op' } });
    const post = request(
      'ApiManagementService_MigrateToStv2',
      'POST',
      `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2`,
      undefined,
      '2024-05-01',
    );
    const posted = await engine.start(post, sendFor(post));
    expect(posted.state).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'UpstreamLinkRefused' } });

    const put = groupRequest('redirected');
    emulator.script({
      kind: 'answer',
      method: 'PUT',
      status: 201,
      headers: { location: 'https://evil.example.com/op' },
      body: { properties: { provisioningState: 'Pending' } },
    });
    const created = await engine.start(put, sendFor(put));
    expect(created.state.poll).toMatchObject({ mode: 'resource', url: put.resourceUrl });
  });

  it('with a lookahead, makes a poll that falls due before the next run, and not before its time', async () => {
    const realTime = makeEngine(containerName, Date.now);
    const start = groupRequest('lookahead');
    const outcome = await realTime.start(start, sendFor(start));
    const dueAt = outcome.state.poll!.nextPollAt;
    expect(await realTime.sweep(token, 0)).toMatchObject({ polled: 0, purged: 0 });
    expect(await realTime.sweep(token, 3000)).toMatchObject({ polled: 1, purged: 0 });
    const [read] = emulator.upstreamRequests({ pathIncludes: '/operationResults/' });
    expect(read!.at).toBeGreaterThanOrEqual(dueAt);
  });

  it('two engines sharing the store never both poll one orchestration for the same due time', async () => {
    const other = makeEngine(containerName);
    const ids: string[] = [];
    for (let index = 0; index < 8; index += 1) {
      const start = groupRequest(`shared-${index}`);
      ids.push((await engine.start(start, sendFor(start))).state.id);
    }
    for (let round = 0; round < 6; round += 1) {
      clock += 2000;
      await Promise.all([engine.sweep(token), other.sweep(token)]);
    }
    const states = await Promise.all(ids.map((id) => engine.get(id)));
    expect(states.map((state) => state?.runtimeStatus)).toEqual(ids.map(() => 'Completed'));
    // lroSteps = 2: exactly two Location reads and one final GET each; a duplicated poll would add more.
    for (let index = 0; index < 8; index += 1) {
      expect(emulator.upstreamRequests({ method: 'GET', pathIncludes: `/containerGroups/shared-${index}` })).toHaveLength(1);
    }
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(16);
  });

  it('a run that cannot begin all its due polls in its time leaves the rest to the next, earliest due first', async () => {
    // Two polls at once, each read answering after 3 s, and a run given 1.5 s: the run begins
    // the two due first and leaves the others, which the next run takes before anything due later.
    const realTime = makeEngine(containerName, Date.now, { pollConcurrency: 2 });
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const start = groupRequest(`burst-${index}`);
      ids.push((await realTime.start(start, sendFor(start))).state.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 2100)); // Retry-After: 2
    emulator.script({ kind: 'delay', delayMs: 3000, pathPattern: 'operationResults', times: 2 });
    const first = await realTime.sweep(token, 0, 1500);
    expect(first).toMatchObject({ due: 5, polled: 2, deferred: 3 });
    const pollCounts = async () => (await Promise.all(ids.map((id) => realTime.get(id)))).map((state) => state?.poll?.pollCount);
    expect(await pollCounts()).toEqual([1, 1, 0, 0, 0]);
    expect(await realTime.sweep(token, 0, 60_000)).toMatchObject({ due: 3, polled: 3, deferred: 0 });
    expect(await pollCounts()).toEqual([1, 1, 1, 1, 1]);
  }, 30_000);

  it('a run also takes what falls due while it works, each orchestration once', async () => {
    const realTime = makeEngine(containerName, Date.now);
    const first = groupRequest('due-first');
    const firstId = (await realTime.start(first, sendFor(first))).state.id;
    await new Promise((resolve) => setTimeout(resolve, 2100)); // Retry-After: 2
    const later = groupRequest('due-during-the-run');
    const laterId = (await realTime.start(later, sendFor(later))).state.id;
    // The first poll's read answers after the second orchestration's first poll fell due.
    emulator.script({ kind: 'delay', delayMs: 2500, pathPattern: 'operationResults', times: 1 });
    expect(await realTime.sweep(token, 0, 60_000)).toMatchObject({ due: 2, polled: 2, deferred: 0 });
    for (const id of [firstId, laterId]) expect((await realTime.get(id))?.poll?.pollCount).toBe(1);
  }, 30_000);

  describe('long-running protocol edges', () => {
    const migration = () =>
      request(
        'ApiManagementService_MigrateToStv2',
        'POST',
        `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2`,
        undefined,
        '2024-05-01',
      );

    it("a POST accepted (202) with nothing to follow is the upstream's failure, never Completed", async () => {
      emulator.script({ kind: 'answer', method: 'POST', status: 202 });
      const post = migration();
      await expect(engine.start(post, sendFor(post))).rejects.toMatchObject({ code: 'UpstreamBadResponse', status: 502 });
      const [id] = await idsWith('Failed');
      expect(await engine.get(id!)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'UpstreamBadResponse' } });
    });

    it('a redirect on a status read fails the operation instead of completing it', async () => {
      const post = migration();
      const outcome = await engine.start(post, sendFor(post));
      emulator.script({ kind: 'answer', status: 302, headers: { location: `${emulator.url}/elsewhere` }, pathPattern: 'operationresults' });
      await tick();
      expect(await engine.get(outcome.state.id)).toMatchObject({
        runtimeStatus: 'Failed',
        output: { status: 502, body: { error: { code: 'UpstreamBadResponse' } } },
      });
    });

    it('follows the newest Location a running answer names, on its own origin only', async () => {
      const post = migration();
      const outcome = await engine.start(post, sendFor(post));
      const moved = `${outcome.state.poll!.url}&moved=1`;
      emulator.script({ kind: 'answer', status: 202, headers: { location: moved, 'retry-after': '1' }, pathPattern: 'operationresults' });
      await tick();
      expect((await engine.get(outcome.state.id))?.poll?.url).toBe(moved);
      emulator.script({
        kind: 'answer',
        status: 202,
        headers: { location: 'https://evil.example.com/op', 'retry-after': '1' },
        pathPattern: 'operationresults',
      });
      await tick();
      expect((await engine.get(outcome.state.id))?.poll?.url).toBe(moved);
      await tick();
      const reads = emulator.upstreamRequests({ pathIncludes: 'operationresults' });
      expect(reads.at(-1)!.query.moved).toBe('1');
    });

    it('a terminate that lands while a poll reads the upstream stands: no output is written over it', async () => {
      const start = groupRequest('terminate-races-poll');
      const outcome = await engine.start(start, sendFor(start));
      await tick();
      // The read that ends the operation answers slowly; the caller terminates meanwhile.
      emulator.script({ kind: 'delay', delayMs: 400, pathPattern: 'operationResults' });
      clock += 2000;
      const sweeping = engine.sweep(token);
      await new Promise((resolve) => setTimeout(resolve, 150));
      await engine.terminate(outcome.state.id, 'no longer wanted');
      await sweeping;
      const state = await engine.get(outcome.state.id);
      expect(state).toMatchObject({ runtimeStatus: 'Terminated' });
      expect(state?.output).toBeUndefined();
    });
  });

  describe("passthrough: only the starter's reads drive it, and time still runs without a token", () => {
    it('polls for the starting actor only; a refused read (401) neither fails the operation nor pushes its polls back', async () => {
      const start = { ...groupRequest('actor'), actor: 'actor-a' };
      const outcome = await engine.start(start, sendFor(start));
      clock += 2000;
      expect(await engine.advance(outcome.state.id, { token, actor: 'actor-b' })).toBe(false);
      // A token of the same principal that the upstream refuses (forged claims, or expired): the
      // claim is released and the schedule stays, so the owner's next read polls at once.
      for (let read = 0; read < 5; read += 1) expect(await engine.advance(outcome.state.id, { token: 'refused-token', actor: 'actor-a' })).toBe(true);
      expect(await engine.get(outcome.state.id)).toMatchObject({
        runtimeStatus: 'Running',
        customStatus: { lastReadStatus: 401 },
        poll: { failedReads: 0, pollCount: 0, nextPollAt: outcome.state.poll!.nextPollAt },
      });
      expect(await engine.advance(outcome.state.id, { token, actor: 'actor-a' })).toBe(true);
      expect(await engine.get(outcome.state.id)).toMatchObject({ poll: { pollCount: 1 }, customStatus: { lastReadStatus: 202 } });
    });

    it('a sweep without a token fails what passed its deadline and purges what passed its retention', async () => {
      const start = { ...groupRequest('nobody-reads'), actor: 'actor-a' };
      const outcome = await engine.start(start, sendFor(start));
      clock += 2000;
      expect(await engine.sweep(undefined)).toMatchObject({ due: 0, polled: 0 });
      expect(emulator.upstreamRequests({ method: 'GET' })).toHaveLength(0);
      clock += 11 * 60_000;
      expect(await engine.sweep(undefined)).toMatchObject({ due: 1, polled: 1 });
      expect(await engine.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'DeadlineExceeded' } });
      clock += 2 * 3600_000;
      expect(await engine.sweep(undefined)).toMatchObject({ purged: 1 });
      expect(await engine.get(outcome.state.id)).toBeUndefined();
      expect(emulator.upstreamRequests({ method: 'GET' })).toHaveLength(0);
    });
  });
});
