/**
 * What a stalled storage account and a slow or failing upstream may cost: every storage call
 * answers within STORAGE_TIMEOUT_MS (503 StorageUnavailable in the documented shape), and the
 * anonymous health probe, however often it is called, makes one short probe per dependency on
 * a pool of its own, never slowing a real call. Through the real registrations on the local
 * host, against the emulator and Azurite behind a proxy the test can stall.
 */
import { request } from 'undici';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';
import { startStallingProxy, type StallingProxy } from '../helpers/stallingProxy';

const subscription = '00000000-0000-0000-0000-000000000000';
const usages = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const storageTimeoutMs = 800;
const probeTimeoutMs = 500;

let gateway: InProcessGateway;
let proxy: StallingProxy;
beforeAll(async () => {
  gateway = await startInProcessGateway(
    { STORAGE_TIMEOUT_MS: String(storageTimeoutMs), HEALTH_PROBE_TIMEOUT_MS: String(probeTimeoutMs), HEALTH_CACHE_SECONDS: '1' },
    {},
    {
      storageConnection: storageBehind(startStallingProxy, (started) => (proxy = started)),
    },
  );
});
afterAll(async () => {
  proxy.resume();
  await gateway.stop();
  await proxy.close();
});
beforeEach(() => gateway.emulator.reset());

const api = (path: string) => `${gateway.url}/api/${path}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(url: string, init: Parameters<typeof request>[1] = {}) {
  const started = performance.now();
  const response = await request(url, init);
  const text = await response.body.text();
  return { status: response.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined, ms: performance.now() - started };
}

describe('a storage account that stalls', () => {
  afterEach(() => proxy.resume());

  it('answers a tracked start and the orchestration routes with 503 StorageUnavailable within the budget', async () => {
    const body = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } });
    const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/stalled?api-version=2025-09-01`;
    // Warm the containers up, then stall.
    expect((await timed(api(path), { method: 'PUT', body, headers: { 'content-type': 'application/json' } })).status).toBe(201);
    proxy.stall();
    for (const call of [
      timed(api(path.replace('stalled', 'stalled-2')), { method: 'PUT', body, headers: { 'content-type': 'application/json' } }),
      timed(api('orchestrations')),
      timed(api('orchestrations/6f1a2b3c-1234-4abc-9def-0123456789ab')),
    ]) {
      const answer = await call;
      expect(answer).toMatchObject({ status: 503, json: { error: { code: 'StorageUnavailable' } } });
      // One storage call at most, each within its budget, plus the margin of a busy machine.
      expect(answer.ms).toBeLessThan(storageTimeoutMs * 4);
    }
    // The start reached no upstream: it stopped at its first storage call.
    expect(gateway.emulator.upstreamRequests({ method: 'PUT', pathIncludes: 'stalled-2' })).toHaveLength(0);
    // Reads that need no storage are not held up.
    expect((await timed(api(usages))).status).toBe(200);
    proxy.resume();
    expect((await timed(api('orchestrations'))).status).toBe(200);
  });
});

describe('health probes', () => {
  const probeRequests = () => gateway.emulator.upstreamRequests().filter((entry) => entry.path === '/');

  it('share one short probe among concurrent callers, on a pool of their own', async () => {
    await pause(1100);
    // Every probe of the upstream hangs for 3 s; real calls answer at once.
    gateway.emulator.script({ kind: 'delay', pathPattern: '^/$', delayMs: 3000, times: 1000 });
    const probes = Array.from({ length: 70 }, () => timed(api('health')));
    const real = await timed(api(usages));
    const answers = await Promise.all(probes);
    expect(real.status).toBe(200);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({ status: 'Degraded', dependencies: { management: { ok: false }, storage: { ok: true } } });
      expect(answer.ms).toBeLessThan(probeTimeoutMs * 4);
    }
    // One probe per upstream (both upstreams are the emulator here), whatever the number of callers.
    expect(probeRequests()).toHaveLength(2);
  });

  it('never take or share a socket of the pool real calls use', async () => {
    await pause(1100);
    // Probes and real calls one after the other: a shared keep-alive pool would hand the
    // probe's idle socket to the next real call, and the other way round.
    for (let round = 0; round < 3; round += 1) {
      await timed(api(usages));
      await pause(1100);
      await timed(api('health'));
    }
    const probePorts = new Set(probeRequests().map((entry) => entry.remotePort));
    const callPorts = new Set(gateway.emulator.upstreamRequests({ pathIncludes: '/usages' }).map((entry) => entry.remotePort));
    expect(probePorts.size).toBeGreaterThan(0);
    expect([...probePorts].filter((port) => callPorts.has(port))).toEqual([]);
  });

  it('probe an upstream answering 503 once, without retries, and keep the report a moment', async () => {
    await pause(1100);
    gateway.emulator.script({ kind: 'answer', pathPattern: '^/$', status: 503, times: 1000 });
    const first = await timed(api('health'));
    expect(first.json).toMatchObject({ dependencies: { management: { ok: true, detail: 'reachable (HTTP 503 to an anonymous probe)' } } });
    expect(first.ms).toBeLessThan(probeTimeoutMs * 4);
    expect(probeRequests()).toHaveLength(2);
    await timed(api('health'));
    expect(probeRequests()).toHaveLength(2);
    await pause(1100);
    await timed(api('health'));
    expect(probeRequests()).toHaveLength(4);
  });
});
