/**
 * Every link the app hands out (answers and notification events) is on APP_PUBLIC_URL when it is
 * set, otherwise on the request as the host presents it; never on a header a caller can set.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { runAppExpectingFailure } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const subscription = '00000000-0000-0000-0000-000000000000';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
const callerSetHeaders = {
  'x-forwarded-host': 'attacker.example',
  'x-forwarded-proto': 'https',
  forwarded: 'host=attacker.example;proto=https',
  'x-original-host': 'attacker.example',
};

async function getJson(url: string, headers: Record<string, string> = {}) {
  const answer = await request(url, { headers });
  return { status: answer.statusCode, headers: answer.headers, json: (await answer.body.json()) as Record<string, unknown> };
}

/** Every link of one long-running start: its answer's headers, the status document, the list entry, the running operation. */
async function linksOfAStart(gateway: GatewayFixture, name: string, headers: Record<string, string> = {}): Promise<string[]> {
  const started = await request(gateway.api(groupPath(name)), { method: 'PUT', headers: { 'content-type': 'application/json', ...headers }, body: groupBody });
  await started.body.dump();
  const id = started.headers['x-orchestration-id'] as string;
  const linkHeader = String(started.headers.link);
  const status = await getJson(gateway.api(`orchestrations/${id}`), headers);
  const listed = await getJson(gateway.api('orchestrations?runtimeStatus=Running'), headers);
  const entry = (listed.json.value as Record<string, string>[]).find((candidate) => candidate.id === id)!;
  const operation = await request(gateway.api(`operations/${id}`), { headers });
  await operation.body.dump();
  expect(operation.statusCode).toBe(202);
  return [
    started.headers.location as string,
    ...[...linkHeader.matchAll(/<([^>]+)>/g)].map((match) => match[1]!),
    ...['statusQueryGetUri', 'terminatePostUri', 'operationGetUri'].flatMap((field) => [status.json[field] as string, entry[field]!]),
    operation.headers.location as string,
  ];
}

/** A webhook receiver on loopback that keeps the events it is sent. */
async function startReceiver(): Promise<{ url: string; events: Record<string, unknown>[]; close(): Promise<void> }> {
  const events: Record<string, unknown>[] = [];
  const server: Server = createServer((incoming, response) => {
    let body = '';
    incoming.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    incoming.on('end', () => {
      events.push(JSON.parse(body) as Record<string, unknown>);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    events,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('with APP_PUBLIC_URL', () => {
  const publicUrl = 'https://gw.contoso.example/api';
  let gateway: GatewayFixture;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    // A long Retry-After keeps the started operations running while the test reads them.
    gateway = await startGateway(
      {
        APP_PUBLIC_URL: `${publicUrl}/`,
        NOTIFY_URL: receiver.url,
        NOTIFY_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
        ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
      },
      { listItems: 3, pageSize: 2, retryAfterSeconds: 60 },
    );
  });
  afterAll(async () => {
    await gateway.stop();
    await receiver.close();
  });

  it('puts nextLink on it', async () => {
    const page = await getJson(gateway.api(usagesPath));
    expect(page.json.nextLink).toBe(`${publicUrl}/${usagesPath}&%24skipToken=2`);
  });

  it('puts Location, Link and the status, terminate and operation URLs on it', async () => {
    const links = await linksOfAStart(gateway, 'public');
    expect(links).toHaveLength(10);
    for (const link of links) expect(link).toMatch(new RegExp(`^${publicUrl}/(operations|orchestrations)/[0-9a-f-]{36}(/terminate)?$`));
  });

  it('puts the links of the end notification on it', async () => {
    const started = await request(gateway.api(groupPath('notified')), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: groupBody });
    await started.body.dump();
    const id = started.headers['x-orchestration-id'] as string;
    await (await request(gateway.api(`orchestrations/${id}/terminate`), { method: 'POST' })).body.dump();
    for (let waited = 0; waited < 15_000 && !receiver.events.some((event) => event.subject === id); waited += 200)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const event = receiver.events.find((candidate) => candidate.subject === id);
    expect(event).toMatchObject({
      source: publicUrl,
      data: {
        statusQueryGetUri: `${publicUrl}/orchestrations/${id}`,
        terminatePostUri: `${publicUrl}/orchestrations/${id}/terminate`,
        operationGetUri: `${publicUrl}/operations/${id}`,
      },
    });
  });
});

describe('without APP_PUBLIC_URL', () => {
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway({}, { listItems: 3, pageSize: 2, retryAfterSeconds: 60 });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it('builds every link on the request, whatever forwarding headers the caller sends', async () => {
    const page = await getJson(gateway.api(usagesPath), callerSetHeaders);
    expect(page.json.nextLink).toMatch(new RegExp(`^${gateway.app.url}/api/subscriptions/`));
    const links = await linksOfAStart(gateway, 'forwarded', callerSetHeaders);
    expect(links).toHaveLength(10);
    for (const link of links) expect(link.startsWith(`${gateway.app.url}/api/`)).toBe(true);
  });
});

it.each([
  ['not absolute', 'gw.contoso.example/api'],
  ['with a query', 'https://gw.contoso.example/api?x=1'],
  ['with user info', 'https://user:CANARY-SECRET-pw@gw.contoso.example/api'],
])('an APP_PUBLIC_URL %s stops start-up, naming it', async (_title, value) => {
  const { code, output } = await runAppExpectingFailure({
    MANAGEMENT_BASE_URL: 'http://127.0.0.1:9',
    LIFECYCLE_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_AUTH: 'static',
    UPSTREAM_STATIC_TOKEN: 'x',
    APP_PUBLIC_URL: value,
  });
  expect(code).toBe(1);
  expect(output).toMatch(/APP_PUBLIC_URL must/);
  expect(output).not.toContain('CANARY-SECRET');
});

describe('with an APP_PUBLIC_URL typed with an internationalised host and a space', () => {
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway({ APP_PUBLIC_URL: 'https://网关.example/my api' }, { retryAfterSeconds: 60 });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it('hands out every link on its normalised form (punycode host, encoded path), a long-running start included', async () => {
    const links = await linksOfAStart(gateway, 'idn-public-url');
    expect(links).toHaveLength(10);
    for (const link of links) expect(link.startsWith('https://xn--d6q013i.example/my%20api/')).toBe(true);
    expect(gateway.app.lines).toEqual(expect.arrayContaining([expect.stringMatching(/^\s+public URL\s+https:\/\/xn--d6q013i\.example\/my%20api$/)]));
  });
});
