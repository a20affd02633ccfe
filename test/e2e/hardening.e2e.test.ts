/**
 * One request must not take the app down, and what the caller sends is read as sent: an endless
 * list is merged only within its bounds; a repeated documented parameter is refused, not merged;
 * the function key in any case stays in the app; principal headers the platform did not set
 * name nobody. Through the real registrations on the local host, against the emulator.
 */
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startCountingStorageProxy, type CountingStorageProxy } from '../../tools/harness/countingStorage';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';

const subscription = '00000000-0000-0000-0000-000000000000';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages`;
const mergedBytesLimit = 4 * 1024 * 1024;
/** A single page of the lists below stays under it (about 1.6 MB at most). */
const answerBytesLimit = 3 * 1024 * 1024;

const listInputBytes = 1024 * 1024;

let gateway: InProcessGateway;
let storage: CountingStorageProxy;
beforeAll(async () => {
  gateway = await startInProcessGateway(
    {
      MAX_MERGED_BYTES: String(mergedBytesLimit),
      MAX_MERGED_ITEMS: '50000',
      ORCHESTRATION_LIST_INPUT_BYTES: String(listInputBytes),
      UPSTREAM_MAX_RESPONSE_BYTES: String(answerBytesLimit),
    },
    {},
    {
      storageConnection: storageBehind(startCountingStorageProxy, (started) => (storage = started)),
    },
  );
});
afterAll(async () => {
  await gateway.stop();
  await storage.close();
});
beforeEach(() => gateway.emulator.reset());

const api = (path: string) => `${gateway.url}/api/${path}`;

/** A page of `items` usages of about `itemBytes` each, whose nextLink reads the same list again. */
function endlessPage(items: number, itemBytes: number) {
  const value = Array.from({ length: items }, (_, index) => ({
    name: { value: `u${index}`, localizedValue: 'x'.repeat(itemBytes) },
    unit: 'Count',
    currentValue: 1,
    limit: 2,
  }));
  return { value, nextLink: `${gateway.emulator.url}/${usagesPath}?api-version=2026-07-01&$skipToken=again` };
}

it('refuses a management answer past UPSTREAM_MAX_RESPONSE_BYTES with a 502 in the error shape, not held whole', async () => {
  gateway.emulator.script({
    kind: 'answer',
    method: 'GET',
    pathPattern: 'usages$',
    status: 200,
    body: { value: [{ name: { value: 'u', localizedValue: 'x'.repeat(answerBytesLimit) } }] },
  });
  const response = await request(api(`${usagesPath}?api-version=2026-07-01`));
  expect(response.statusCode).toBe(502);
  expect(await response.body.json()).toMatchObject({
    error: { code: 'UpstreamBadResponse', message: expect.stringContaining(`exceeded ${answerBytesLimit} bytes`) },
  });
});

describe('gateway-pages against a list that never ends', () => {
  it('stops at MAX_MERGED_BYTES and answers the merged part with a nextLink, not a 500', async () => {
    // Pages of ~1 MB, without end: the merge must stop near 4 MB, after a handful of reads.
    gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: endlessPage(100, 10_000), times: 10_000 });
    const response = await request(api(`${usagesPath}?api-version=2026-07-01&gateway-pages=all`));
    expect(response.statusCode).toBe(200);
    const text = await response.body.text();
    expect(text.length).toBeLessThanOrEqual(mergedBytesLimit);
    const body = JSON.parse(text) as { value: unknown[]; nextLink?: string };
    expect(body.value.length).toBeGreaterThanOrEqual(300);
    expect(body.nextLink).toMatch(new RegExp(`^${gateway.url}/api/${usagesPath}\\?`));
    // The page read past the bound is one extra read, left for the caller's next call.
    expect(gateway.emulator.upstreamRequests().length).toBeLessThanOrEqual(Math.ceil(mergedBytesLimit / 1_000_000) + 1);
  });

  it('stops at MAX_MERGED_ITEMS the same way', async () => {
    gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body: endlessPage(20_000, 1), times: 10_000 });
    const response = await request(api(`${usagesPath}?api-version=2026-07-01&gateway-pages=all`));
    expect(response.statusCode).toBe(200);
    const body = (await response.body.json()) as { value: unknown[]; nextLink?: string };
    expect(body.value).toHaveLength(40_000);
    expect(body.nextLink).toBeDefined();
    expect(gateway.emulator.upstreamRequests()).toHaveLength(3);
  });
});

describe('the query as the caller sent it', () => {
  it('refuses a repeated api-version instead of forwarding one of them', async () => {
    const response = await request(api(`${usagesPath}?api-version=2026-07-01&api-version=2099-01-01`));
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toMatchObject({ error: { code: 'InvalidRequest', target: 'api-version' } });
    expect(gateway.emulator.upstreamRequests()).toEqual([]);
  });

  it.each(['constructor', 'toString', '__proto__'])('forwards a parameter named %s given once', async (name) => {
    const response = await request(api(`${usagesPath}?api-version=2026-07-01&${name}=1`));
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(gateway.emulator.upstreamRequests()[0]!.query).toEqual(expect.objectContaining({ [name]: '1' }));
  });

  it.each(['Code', 'CODE'])('keeps a key sent as ?%s= out of the upstream call and the orchestration', async (name) => {
    const key = `function-key-${name}-7741`;
    const body = JSON.stringify({
      location: 'westus',
      properties: { osType: 'Linux', containers: [{ name: 'c', properties: { image: 'nginx', resources: { requests: { cpu: 1, memoryInGB: 1 } } } }] },
    });
    const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/key-${name === 'Code' ? 'mixed' : 'upper'}?api-version=2025-09-01&${name}=${key}`;
    const response = await request(api(path), { method: 'PUT', body, headers: { 'content-type': 'application/json' } });
    expect([200, 201]).toContain(response.statusCode);
    await response.body.dump();
    const [upstream] = gateway.emulator.upstreamRequests({ method: 'PUT' });
    expect(JSON.stringify(upstream)).not.toContain(key);
    const id = response.headers['x-orchestration-id'] as string;
    const document = await (await request(api(`orchestrations/${id}`))).body.text();
    expect(document).not.toContain(key);
  });

  it('refuses a body that is not UTF-8 rather than forwarding a changed one', async () => {
    const bytes = Buffer.concat([Buffer.from('{"location":"west'), Buffer.from([0xc3, 0x28]), Buffer.from('us","properties":{}}')]);
    const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/bytes?api-version=2025-09-01`;
    const response = await request(api(path), { method: 'PUT', body: bytes, headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toMatchObject({ error: { code: 'InvalidJson', message: expect.stringContaining('UTF-8') } });
    expect(gateway.emulator.upstreamRequests()).toEqual([]);
  });
});

describe('the logged caller', () => {
  it('is the first x-functions-key line with no keys set too, as the host authenticates it', async () => {
    const response = await request(api(`${usagesPath}?api-version=2026-07-01`), {
      headers: { 'x-functions-key': ['first-line-key-0123456789', 'chosen-by-caller'], 'x-ms-client-request-id': 'second-line-1' },
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    const line = gateway.logLines.find((logged) => logged.includes('second-line-1') && logged.includes('"event":"call"'));
    expect(line).toContain(`"caller":"${keyFingerprintOf('first-line-key-0123456789')}"`);
  });

  it('is not taken from a principal header without App Service Authentication', async () => {
    const response = await request(api(`${usagesPath}?api-version=2026-07-01`), {
      headers: { 'x-ms-client-principal-name': 'ceo@contoso.com', 'x-ms-client-request-id': 'spoof-check-1' },
    });
    await response.body.dump();
    const line = gateway.logLines.find((logged) => logged.includes('spoof-check-1') && logged.includes('"event":"call"'));
    expect(line).toBeDefined();
    expect(line).not.toContain('ceo@contoso.com');
  });
});

/** Starts `count` container groups whose input holds `bulky`: their orchestration ids. */
async function startBulky(prefix: string, count: number, bulky: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let index = 0; index < count; index += 1) {
    const body = JSON.stringify({
      location: 'westus',
      properties: { osType: 'Linux', containers: [{ name: 'c', properties: { image: 'nginx', command: [bulky] } }] },
    });
    const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${prefix}-${index}?api-version=2025-09-01`;
    const response = await request(api(path), { method: 'PUT', body, headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(201);
    await response.body.dump();
    ids.add(response.headers['x-orchestration-id'] as string);
  }
  return ids;
}

describe('GET orchestrations, whatever is stored', () => {
  it('stays small (no inputs) and pages with x-ms-continuation-token', async () => {
    // 30 orchestrations with ~200 KB inputs each: the old list inlined every one of them.
    const bulky = 'x'.repeat(200_000);
    const ids = await startBulky('bulky', 30, bulky);
    const seen: string[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const response = await request(api('orchestrations?top=8'), { headers: continuation ? { 'x-ms-continuation-token': continuation } : {} });
      expect(response.statusCode).toBe(200);
      const text = await response.body.text();
      expect(text.length).toBeLessThan(8 * 1024);
      expect(text).not.toContain(bulky.slice(0, 100));
      const page = JSON.parse(text) as { value: { id: string; name: string; runtimeStatus: string; statusQueryGetUri: string }[] };
      expect(page.value.length).toBeLessThanOrEqual(8);
      for (const entry of page.value) {
        expect(entry).toMatchObject({ name: 'ContainerGroups_CreateOrUpdate', runtimeStatus: 'Running', statusQueryGetUri: api(`orchestrations/${entry.id}`) });
        expect(entry).not.toHaveProperty('input');
      }
      seen.push(...page.value.map((entry) => entry.id));
      continuation = response.headers['x-ms-continuation-token'] as string | undefined;
      pages += 1;
    } while (continuation && pages < 20);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it('reads with showInput only the documents whose inputs it returns, within ORCHESTRATION_LIST_INPUT_BYTES, and pages on', async () => {
    // Inputs of ~150 KB: one answer of the whole store would read every document.
    const bulky = 'y'.repeat(150_000);
    const ids = await startBulky('inputs', 16, bulky);
    const documentRead = /^GET [^/]+\/instances\/([0-9a-f-]+)\.json$/;
    const withInput = new Map<string, string>();
    let continuation: string | undefined;
    let pages = 0;
    do {
      storage.reset();
      const response = await request(api('orchestrations?showInput=true'), { headers: continuation ? { 'x-ms-continuation-token': continuation } : {} });
      expect(response.statusCode).toBe(200);
      const page = (await response.body.json()) as { value: { id: string; input?: unknown }[] };
      const reads = storage.answered.filter((answer) => documentRead.test(answer.line));
      // Each document read is an input returned, and the documents read stay within the bound
      // (an answer always holds its first entry).
      expect(reads.map((answer) => documentRead.exec(answer.line)![1]).sort()).toEqual(page.value.map((entry) => entry.id).sort());
      if (page.value.length > 1) expect(reads.reduce((sum, answer) => sum + answer.bytes, 0)).toBeLessThanOrEqual(listInputBytes);
      for (const entry of page.value) {
        expect(entry.input).toBeDefined();
        withInput.set(entry.id, JSON.stringify(entry.input));
      }
      continuation = response.headers['x-ms-continuation-token'] as string | undefined;
      pages += 1;
    } while (continuation && pages < 200);
    for (const id of ids) expect(withInput.get(id)).toContain(bulky);
  });

  it('refuses a top out of range and a continuation token that is not one', async () => {
    for (const query of ['top=0', 'top=1001', 'top=ten']) {
      const response = await request(api(`orchestrations?${query}`));
      expect(response.statusCode).toBe(400);
      expect(await response.body.json()).toMatchObject({ error: { code: 'InvalidRequest', target: 'top' } });
    }
    const response = await request(api('orchestrations'), { headers: { 'x-ms-continuation-token': 'bad token with spaces' } });
    expect(response.statusCode).toBe(400);
    await response.body.dump();
  });

  it.each([
    ['a lone surrogate', { marker: '\ud800' }],
    ['control characters', { marker: '2!\u0001\u0002!x' }],
  ])('refuses a token whose marker holds %s with a 400, never a fake storage outage', async (_title, cursor) => {
    const token = Buffer.from(JSON.stringify(cursor)).toString('base64url');
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await request(api('orchestrations?runtimeStatus=Completed'), { method, headers: { 'x-ms-continuation-token': token } });
      expect(response.statusCode).toBe(400);
      expect(await response.body.json()).toMatchObject({
        error: { code: 'InvalidRequest', target: 'x-ms-continuation-token', message: expect.stringContaining('previous answer') },
      });
    }
  });
});

describe('bytes as some tools send them', () => {
  it('a JSON body with a UTF-8 byte-order mark is read, and forwarded without it', async () => {
    const groupPath = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/with-bom?api-version=2025-09-01`;
    const json = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
    const response = await request(api(groupPath), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]),
    });
    expect(response.statusCode).toBe(201);
    await response.body.dump();
    expect(gateway.emulator.upstreamRequests({ method: 'PUT', pathIncludes: '/with-bom' }).map((sent) => sent.body)).toEqual([json]);
  });

  it("a malformed percent-escape in the local host's admin route answers 404, not 500", async () => {
    const response = await request(`${gateway.url}/admin/functions/%E0`, { method: 'POST' });
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toMatchObject({ error: { code: 'NotFound' } });
  });
});
