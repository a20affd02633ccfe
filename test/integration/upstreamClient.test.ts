/**
 * The upstream client against the emulator over loopback, with its fault switches: retries
 * only where safe, the time budget, and no token for another host.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { startEmulator, type Emulator } from '../../tools/emulator/emulatorServer';

const usagesPath = '/subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages';
const migratePath = '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2';

let emulator: Emulator;
let client: UpstreamClient;
const sleeps: number[] = [];

function makeClient(timeoutMs = 2000): UpstreamClient {
  return new UpstreamClient({
    baseUrl: emulator.url,
    timeoutMs,
    retryPolicy: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 50 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
}

beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});
beforeEach(() => {
  emulator.reset();
  sleeps.length = 0;
  client = makeClient();
});

const get = (path = usagesPath) => client.send({ method: 'GET', url: `${emulator.url}${path}?api-version=2026-07-01`, token: 'emulator-token' });
const post = () =>
  client.send({
    method: 'POST',
    url: `${emulator.url}${migratePath}?api-version=2024-05-01`,
    token: 'emulator-token',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });

describe('UpstreamClient', () => {
  it('repeats a GET answered 429, waiting as asked, then returns the 200', async () => {
    emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'TooManyRequests', message: 'slow down' } } });
    const response = await get();
    expect(response.status).toBe(200);
    expect(response.attempts).toBe(2);
    expect(sleeps).toEqual([1000]);
    expect(emulator.upstreamRequests({ method: 'GET' })).toHaveLength(2);
  });

  it('gives the 429 back at once when the wait asked for does not fit the budget', async () => {
    emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '30' }, body: { error: { code: 'TooManyRequests', message: 'slow down' } } });
    const response = await get();
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe('30');
    expect(sleeps).toEqual([]);
  });

  it('gives a lasting 503 back as it came after the bounded retries', async () => {
    emulator.script({ kind: 'answer', status: 503, body: { error: { code: 'ServiceUnavailable', message: 'down' } }, times: 10 });
    const response = await get();
    expect(response.status).toBe(503);
    expect(JSON.parse(response.bodyText)).toEqual({ error: { code: 'ServiceUnavailable', message: 'down' } });
    expect(emulator.upstreamRequests()).toHaveLength(4);
  });

  it('never sends a POST twice after a 503 or a reset', async () => {
    emulator.script({ kind: 'answer', method: 'POST', status: 503, body: { error: { code: 'ServiceUnavailable', message: 'down' } } });
    expect((await post()).status).toBe(503);
    expect(emulator.upstreamRequests({ method: 'POST' })).toHaveLength(1);

    emulator.reset();
    emulator.script({ kind: 'reset', method: 'POST' });
    await expect(post()).rejects.toMatchObject({ code: 'UpstreamUnreachable', status: 502 });
    expect(emulator.upstreamRequests({ method: 'POST' })).toHaveLength(1);
  });

  it('repeats a POST answered 429', async () => {
    emulator.script({ kind: 'answer', method: 'POST', status: 429, headers: { 'retry-after': '1' } });
    expect((await post()).status).toBe(202);
    expect(emulator.upstreamRequests({ method: 'POST' })).toHaveLength(2);
  });

  it('repeats a GET after a connection reset', async () => {
    emulator.script({ kind: 'reset' });
    expect((await get()).status).toBe(200);
    expect(emulator.upstreamRequests()).toHaveLength(2);
  });

  it('answers 504 when the upstream is slower than the budget', async () => {
    client = makeClient(300);
    emulator.script({ kind: 'delay', delayMs: 1500 });
    const started = Date.now();
    await expect(get()).rejects.toMatchObject({ code: 'UpstreamTimeout', status: 504 });
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('ends a body dripped out within every idle timeout at the budget of the whole call', async () => {
    client = makeClient(300);
    // 16 bytes every 50 ms: each chunk well inside the 300 ms idle timeouts, the body never ending.
    emulator.script({ kind: 'drip', delayMs: 50, body: { value: Array.from({ length: 1000 }, (_, index) => ({ name: `u${index}` })) } });
    const started = Date.now();
    await expect(get()).rejects.toMatchObject({ code: 'UpstreamTimeout', status: 504 });
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('refuses an answer past its size bound', async () => {
    await expect(
      client.send({ method: 'GET', url: `${emulator.url}${usagesPath}?api-version=2026-07-01`, token: 'emulator-token', maxResponseBytes: 64 }),
    ).rejects.toMatchObject({
      code: 'UpstreamBadResponse',
      message: 'The upstream answer exceeded 64 bytes.',
    });
  });

  it('returns a malformed body as text, for the caller to judge', async () => {
    emulator.script({ kind: 'malformed' });
    const response = await get();
    expect(() => JSON.parse(response.bodyText)).toThrow();
  });

  it('gives a call without x-ms-client-request-id one of its own when asked to, and keeps one given', async () => {
    const ids = new UpstreamClient({
      baseUrl: emulator.url,
      timeoutMs: 2000,
      retryPolicy: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 50 },
      clientRequestIds: true,
    });
    try {
      await ids.send({ method: 'GET', url: `${emulator.url}${usagesPath}?api-version=2026-07-01` });
      await ids.send({
        method: 'GET',
        url: `${emulator.url}${usagesPath}?api-version=2026-07-01`,
        headers: { 'x-ms-client-request-id': 'caller-correlation-1' },
      });
      await client.send({ method: 'GET', url: `${emulator.url}${usagesPath}?api-version=2026-07-01` });
    } finally {
      await ids.close();
    }
    const [own, given, none] = emulator.upstreamRequests({ pathIncludes: '/usages' }).map((entry) => entry.headers['x-ms-client-request-id']);
    expect(own).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(given).toBe('caller-correlation-1');
    expect(none).toBeUndefined();
  });

  it('refuses to send anything, token included, off the configured origin', async () => {
    let seenAuthorization: string | undefined | null = null;
    const foreign: Server = createServer((request, response) => {
      seenAuthorization = request.headers.authorization;
      response.end('{}');
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    const foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/steal`;
    await expect(client.send({ method: 'GET', url: foreignUrl, token: 'emulator-token' })).rejects.toMatchObject({ code: 'UpstreamLinkRefused' });
    expect(seenAuthorization).toBeNull();
    await new Promise<void>((resolve) => foreign.close(() => resolve()));
  });
});
