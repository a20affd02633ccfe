/**
 * What a held `gateway-wait` costs and how many may be held: the waiters on one orchestration
 * share one watch (storage requests counted, not timed), a waiter whose caller hangs up stops
 * reading at once, waits past the per-caller and per-instance bounds get 429 `TooManyWaits`
 * with Retry-After (nothing sent upstream), and every waiter still gets the orchestration's
 * end. Through the real registrations on the local host, against the emulator and Azurite
 * behind a proxy that counts storage requests.
 */
import { request } from 'undici';
import { startCountingStorageProxy, type CountingStorageProxy } from '../../tools/harness/countingStorage';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';

const subscription = '00000000-0000-0000-0000-000000000000';
const groupPath = (name: string, query = '') =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01${query}`;
const perCaller = 25;
const perInstance = 40;
/** The emulator's Retry-After: no poll falls due while a test waits, so the orchestration stays Running. */
const farRetryAfterSeconds = 600;

let gateway: InProcessGateway;
let storage: CountingStorageProxy;
beforeAll(async () => {
  gateway = await startInProcessGateway(
    {
      GATEWAY_WAIT_MAX_SECONDS: '60',
      GATEWAY_WAIT_MAX_PER_CALLER: String(perCaller),
      GATEWAY_WAIT_MAX_PER_INSTANCE: String(perInstance),
      LRO_MIN_POLL_SECONDS: '1',
      LRO_DEFAULT_POLL_SECONDS: '1',
    },
    { lroSteps: 2, retryAfterSeconds: farRetryAfterSeconds },
    {
      storageConnection: storageBehind(startCountingStorageProxy, (started) => (storage = started)),
    },
  );
}, 60_000);
afterAll(async () => {
  await gateway.stop();
  await storage.close();
});

const api = (path: string) => `${gateway.url}/api/${path}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(method: 'GET' | 'PUT' | 'POST', path: string, options: { caller?: string; body?: string; signal?: AbortSignal } = {}) {
  const headers: Record<string, string> = {
    ...(options.caller ? { 'x-functions-key': options.caller } : {}),
    ...(options.body ? { 'content-type': 'application/json' } : {}),
  };
  const response = await request(api(path), { method, headers, body: options.body, signal: options.signal });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });

async function runningOrchestration(name: string): Promise<string> {
  const started = await call('PUT', groupPath(name), { body: groupBody });
  expect(started.status).toBe(201);
  return started.headers['x-orchestration-id'] as string;
}

/** Waits held by `caller`, each ended by its abort controller (a caller hanging up). */
function heldWaits(id: string, caller: string, count: number, seconds = 50) {
  const controllers = Array.from({ length: count }, () => new AbortController());
  const answers = controllers.map((controller) =>
    call('GET', `orchestrations/${id}?gateway-wait=${seconds}`, { caller, signal: controller.signal }).catch(() => 'hung up' as const),
  );
  return { hangUp: () => controllers.forEach((controller) => controller.abort()), answers };
}

/** Asks until the bound answers 429: the held waits arrive in their own time on a busy machine. */
async function refusedWait(id: string, caller: string) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const answer = await call('GET', `orchestrations/${id}?gateway-wait=1`, { caller });
    if (answer.status === 429) return answer;
  }
  throw new Error('no wait was refused');
}

const touching = (id: string) => storage.requests.filter((line) => line.includes(id));
const downloads = (id: string) => touching(id).filter((line) => line.startsWith('GET '));

describe('waiters on one orchestration', () => {
  it('share one watch: twenty cost about what one does, and the document is downloaded once, not per waiter', async () => {
    const id = await runningOrchestration('watched-together');
    storage.reset();
    expect((await call('GET', `orchestrations/${id}?gateway-wait=3`)).status).toBe(202);
    const alone = touching(id).length;
    const aloneDownloads = downloads(id).length;

    storage.reset();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('GET', `orchestrations/${id}?gateway-wait=3`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(202));
    expect(answers.map((answer) => answer.json?.runtimeStatus)).toEqual(Array(20).fill('Running'));
    // Each waiter's own request costs one HEAD (who may see it); the watch's reads are shared.
    expect(touching(id).length).toBeLessThanOrEqual(alone + 20 + 10);
    expect(downloads(id).length).toBeLessThanOrEqual(aloneDownloads + 2);
  }, 60_000);

  it("let a waiter in from one HEAD, its watch's first look, and a plain status read downloads the document once", async () => {
    const id = await runningOrchestration('read-once');
    storage.reset();
    expect((await call('GET', `orchestrations/${id}`)).status).toBe(202);
    expect(downloads(id)).toHaveLength(1);
    expect(touching(id)).toHaveLength(1);
    // A one-second wait: the caller's check is the watch's first look, then one look as it runs out.
    storage.reset();
    expect((await call('GET', `orchestrations/${id}?gateway-wait=1`)).status).toBe(202);
    expect(touching(id).filter((line) => line.startsWith('HEAD ')).length).toBeLessThanOrEqual(2);
  }, 60_000);

  it('stop reading storage once their callers hang up', async () => {
    const id = await runningOrchestration('hung-up');
    storage.reset();
    const waits = heldWaits(id, 'leaving-caller', 5);
    for (const deadline = Date.now() + 20_000; touching(id).length < 8 && Date.now() < deadline;) await pause(100);
    expect(touching(id).length).toBeGreaterThanOrEqual(8);
    waits.hangUp();
    await Promise.all(waits.answers);
    // A read already on its way may still land; after that, nothing more.
    await pause(1000);
    storage.reset();
    await pause(3000);
    expect(storage.requests).toEqual([]);
  }, 60_000);

  it('all get the end when the orchestration completes', async () => {
    gateway.emulator.context.options.retryAfterSeconds = 1;
    try {
      const id = await runningOrchestration('completes-for-all');
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) => call('GET', `${index % 2 ? 'operations' : 'orchestrations'}/${id}?gateway-wait=50`)),
      );
      expect(answers.filter((_, index) => index % 2 === 0).map((answer) => [answer.status, answer.json?.runtimeStatus])).toEqual(
        Array(5).fill([200, 'Completed']),
      );
      expect(answers.filter((_, index) => index % 2 === 1).map((answer) => [answer.status, answer.json?.name])).toEqual(
        Array(5).fill([200, 'completes-for-all']),
      );
      // lroSteps = 2: two status reads and the final GET, however many waited.
      expect(gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/completes-for-all' })).toHaveLength(1);
    } finally {
      gateway.emulator.context.options.retryAfterSeconds = farRetryAfterSeconds;
    }
  }, 90_000);
});

describe('held waits are bounded', () => {
  it('per caller and per instance: past either, 429 TooManyWaits with Retry-After, and a start past it sends nothing', async () => {
    const id = await runningOrchestration('bounded');
    const first = heldWaits(id, 'busy-caller', perCaller);
    const ownRefusal = await refusedWait(id, 'busy-caller');
    expect(ownRefusal.json).toMatchObject({
      error: { code: 'TooManyWaits', target: 'gateway-wait', message: expect.stringContaining('GATEWAY_WAIT_MAX_PER_CALLER') },
    });
    expect(Number(ownRefusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(ownRefusal.headers['retry-after'])).toBeLessThanOrEqual(50);
    // Another caller is not held to the busy one's bound.
    const second = heldWaits(id, 'second-caller', perInstance - perCaller);
    const instanceRefusal = await refusedWait(id, 'third-caller');
    expect(instanceRefusal.json).toMatchObject({ error: { code: 'TooManyWaits', message: expect.stringContaining('GATEWAY_WAIT_MAX_PER_INSTANCE') } });
    expect(Number(instanceRefusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    gateway.emulator.reset();
    const start = await call('PUT', groupPath('refused-start', '&gateway-wait=20'), { caller: 'third-caller', body: groupBody });
    expect(start).toMatchObject({ status: 429, json: { error: { code: 'TooManyWaits' } } });
    expect(gateway.emulator.upstreamRequests()).toEqual([]);

    first.hangUp();
    second.hangUp();
    await Promise.all([...first.answers, ...second.answers]);
    // The slots are free again once the app has seen the callers go.
    let after = await call('GET', `orchestrations/${id}?gateway-wait=1`, { caller: 'busy-caller' });
    for (const deadline = Date.now() + 20_000; after.status === 429 && Date.now() < deadline;)
      after = await call('GET', `orchestrations/${id}?gateway-wait=1`, { caller: 'busy-caller' });
    expect(after.status).toBe(202);
  }, 90_000);
});
