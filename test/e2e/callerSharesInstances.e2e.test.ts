/**
 * A caller's share (ACCESS_POLICY `rate`) across instances: the app's instances are separate
 * processes sharing one storage account (Azurite), as Azure Functions runs them when it scales
 * out. A caller allowed 60 reads a minute that calls every instance in turn gets about its 60 in
 * all, and the minute's refill, not 60 on each instance (src/access/sharedCallerRates.ts).
 */
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(180_000);

const usages = 'subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01';
const perMinute = 60;
/** One key per test, so each draws on a share of its own. */
const keys = { pair: 'share-pair-key-0123456789ab', four: 'share-four-key-0123456789ab' };

let gateway: GatewayFixture;
let others: AppProcess[];

beforeAll(async () => {
  gateway = await startGateway({
    LOCAL_HOST_KEYS: JSON.stringify(keys),
    ACCESS_POLICY: JSON.stringify([{ callers: Object.values(keys).map(keyFingerprintOf), allow: ['read'], rate: { readsPerMinute: perMinute } }]),
  });
  others = await Promise.all(Array.from({ length: 3 }, () => startApp(gateway.env)));
  gateway.others.push(...others);
}, 120_000);
afterAll(async () => {
  await Promise.all((others ?? []).map((other) => other.stop()));
  await gateway?.stop();
});

async function read(baseUrl: string, key: string): Promise<{ status: number; code?: string }> {
  const response = await request(`${baseUrl}/api/${usages}`, { headers: { 'x-functions-key': key } });
  const text = await response.body.text();
  return { status: response.statusCode, code: response.statusCode === 429 ? (JSON.parse(text) as { error: { code: string } }).error.code : undefined };
}

describe.each([
  [2, 'pair'],
  [4, 'four'],
] as const)('%i app instances sharing one storage account', (count, keyName) => {
  it(`hold a caller's share of ${perMinute} reads a minute across them all, not ${perMinute} on each`, async () => {
    const instances = [gateway.app, ...others].slice(0, count).map((app) => app.url);
    // Every instance's share would give count × 60; the calls go to each instance in turn, one at a time.
    const calls = count * perMinute + 20;
    const allowedBy = new Map<string, number>();
    const started = Date.now();
    for (let call = 0; call < calls; call += 1) {
      const instance = instances[call % count]!;
      const answer = await read(instance, keys[keyName]);
      if (answer.status === 200) allowedBy.set(instance, (allowedBy.get(instance) ?? 0) + 1);
      else expect(answer).toEqual({ status: 429, code: 'CallerRateLimited' });
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    const allowed = [...allowedBy.values()].reduce((sum, served) => sum + served, 0);
    // The share, its refill while the calls were made (one a second), and a little slack.
    expect(allowed).toBeLessThanOrEqual(perMinute + Math.ceil((elapsedSeconds * perMinute) / 60) + 5);
    // Clearly not a share per instance.
    expect(allowed).toBeLessThan(count * perMinute * 0.75);
    // The share was served, by every instance: calls leased and not used may be lost, never many.
    expect(allowed).toBeGreaterThanOrEqual(perMinute / 2);
    expect(allowedBy.size).toBe(count);
  });
});
