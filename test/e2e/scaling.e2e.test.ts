/**
 * Size scaling: every route that takes a body or a list does work linear in its size, and its
 * answer stays bounded. Each request is timed at n and 4n items in the same run, interleaved,
 * and compared as a ratio: linear work gives about 4 (less, with fixed costs), quadratic 16.
 * The bound 8 leaves room for noise on a shared machine; no absolute time is asserted.
 */
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

const subscription = '00000000-0000-0000-0000-000000000000';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages`;

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = await startInProcessGateway({ MAX_REQUEST_BODY_BYTES: String(16 * 1024 * 1024) });
});
afterAll(async () => {
  await gateway.stop();
});
beforeEach(() => gateway.emulator.reset());

interface Sent {
  status: number;
  bytes: number;
  ms: number;
}

async function send(method: string, path: string, body?: unknown): Promise<Sent> {
  const started = performance.now();
  const response = await request(`${gateway.url}/api/${path}`, {
    method: method as 'GET',
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  const text = await response.body.text();
  return { status: response.statusCode, bytes: text.length, ms: performance.now() - started };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Times `run(n)` and `run(4n)` interleaved, five times each, after a warm-up; returns medians and answers. */
async function scaling(n: number, run: (size: number) => Promise<Sent>, before: () => void = () => undefined) {
  before();
  await run(n);
  const small: Sent[] = [];
  const large: Sent[] = [];
  for (let round = 0; round < 5; round += 1) {
    before();
    small.push(await run(n));
    before();
    large.push(await run(4 * n));
  }
  return { ratio: median(large.map((sent) => sent.ms)) / median(small.map((sent) => sent.ms)), small: small[0]!, large: large[0]! };
}

const expression = (index: number) => `[parameters('p${index}')]`;

const cases: [string, number, (size: number) => Promise<Sent>, number][] = [
  [
    'container group PUT with n bad containers',
    5000,
    (size) =>
      send('PUT', `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/big?api-version=2025-09-01`, {
        location: 'westus',
        properties: { osType: 'Linux', containers: Array.from({ length: size }, (_, index) => ({ name: index, properties: { image: expression(index) } })) },
      }),
    400,
  ],
  [
    'private endpoint connection PUT with n unknown fields and a bad status',
    20_000,
    (size) =>
      send(
        'PUT',
        `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.EventHub/namespaces/namespace1/privateEndpointConnections/pec?api-version=2026-01-01`,
        {
          properties: { privateLinkServiceConnectionState: { status: 'Maybe' }, extra: Array.from({ length: size }, (_, index) => ({ index })) },
        },
      ),
    400,
  ],
  [
    'gallery image version template with n resources full of expressions and errors',
    1000,
    (size) =>
      send('POST', 'templates/galleryImageVersions/validate', {
        resources: Array.from({ length: size }, (_, index) => ({
          type: 'Vendor.Compute/galleries/images/versions',
          name: expression(index),
          location: 'westus',
          properties: {
            storageProfile: { dataDiskImages: [{ lun: 1 }, { lun: 1 }, { lun: expression(index) }] },
            publishingProfile: { replicaCount: 0.5, targetRegions: [{ name: expression(index), storageAccountType: 'StandardSSD_LRS' }] },
          },
        })),
      }),
    200,
  ],
  [
    'one gallery image version with n target regions, each with an expression and an error',
    2000,
    (size) =>
      send('POST', 'templates/galleryImageVersions/validate', {
        name: '1.0.0',
        location: 'westus',
        properties: {
          storageProfile: {},
          publishingProfile: { targetRegions: Array.from({ length: size }, (_, index) => ({ name: expression(index), regionalReplicaCount: 0.5 })) },
        },
      }),
    200,
  ],
  [
    'API template with n resources full of expressions and errors',
    1000,
    (size) =>
      send('POST', 'templates/apis/validate', {
        resources: Array.from({ length: size }, (_, index) => ({
          type: 'Vendor.ApiManagement/service/apis',
          name: expression(index),
          properties: { path: expression(index), protocols: ['Gopher', expression(index)], serviceUrl: 'not a url' },
        })),
      }),
    200,
  ],
  [
    'gateway custom properties with n bad keys',
    5000,
    (size) =>
      send('POST', 'templates/gatewayCustomProperties/validate', {
        customProperties: Object.fromEntries(
          Array.from({ length: size }, (_, index) => [`Vendor.WindowsAzure.ApiManagement.Gateway.Unknown${index}`, 'maybe']),
        ),
      }),
    200,
  ],
  [
    'gateway custom properties build with n unknown ciphers',
    5000,
    (size) =>
      send('POST', 'templates/gatewayCustomProperties/build', {
        ciphers: Object.fromEntries(Array.from({ length: size }, (_, index) => [`TLS_UNKNOWN_${index}`, true])),
      }),
    400,
  ],
];

it.each(cases)('%s: linear work, bounded answer', async (_title, n, run, status) => {
  const { ratio, small, large } = await scaling(n, run);
  expect(small.status).toBe(status);
  expect(large.status).toBe(status);
  expect(ratio).toBeLessThan(8);
  // Problems are listed up to a bound: the answer does not grow with the input.
  expect(large.bytes).toBeLessThan(Math.max(small.bytes * 1.5, 64 * 1024));
  expect(gateway.emulator.upstreamRequests()).toEqual([]);
});

it('gateway-pages over n pages: linear work', async () => {
  const page = { value: Array.from({ length: 50 }, (_, index) => ({ name: { value: `u${index}` }, unit: 'Count', currentValue: 1, limit: 2 })) };
  const withPages = (pages: number) => () => {
    gateway.emulator.reset();
    gateway.emulator.script({
      kind: 'answer',
      method: 'GET',
      pathPattern: 'usages$',
      status: 200,
      body: { ...page, nextLink: `${gateway.emulator.url}/${usagesPath}?api-version=2026-07-01&$skipToken=next` },
      times: pages - 1,
    });
    gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: page });
  };
  const sizes = new Map<number, number>();
  const { ratio, small, large } = await scaling(20, async (pages) => {
    withPages(pages)();
    const sent = await send('GET', `${usagesPath}?api-version=2026-07-01&gateway-pages=all`);
    sizes.set(pages, sent.bytes);
    return sent;
  });
  expect(small.status).toBe(200);
  expect(large.status).toBe(200);
  expect(sizes.get(80)! / sizes.get(20)!).toBeCloseTo(4, 0);
  expect(ratio).toBeLessThan(8);
});
