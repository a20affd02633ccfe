/**
 * Every URL the upstream hands back that points elsewhere (another host, scheme or port, or
 * a userinfo trick) is refused, and the token never leaves for it: nextLink, Location,
 * Azure-AsyncOperation and the migration's location.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

let gateway: InProcessGateway;
const foreignHits: { url: string; authorization?: string }[] = [];
const servers: Server[] = [];
let foreignHostPort = 0;
let foreignPort = 0;

async function listen(host: string): Promise<number> {
  const server = createServer((incoming, response) => {
    foreignHits.push({ url: incoming.url ?? '', authorization: incoming.headers.authorization });
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"value":[],"status":"Succeeded"}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  gateway = await startInProcessGateway();
  foreignHostPort = await listen('127.0.0.2');
  foreignPort = await listen('127.0.0.1');
});
afterAll(async () => {
  await gateway.stop();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});
beforeEach(() => gateway.emulator.reset());

const emulatorPort = () => new URL(gateway.emulator.url).port;
const foreignUrls = (): [string, string][] => [
  ['another host', `http://127.0.0.2:${foreignHostPort}/steal`],
  ['another port', `http://127.0.0.1:${foreignPort}/steal`],
  ['another scheme', `https://127.0.0.1:${emulatorPort()}/steal`],
  ['userinfo that hides the host', `http://127.0.0.1:${emulatorPort()}@127.0.0.2:${foreignHostPort}/steal`],
  ['userinfo on the upstream itself', `http://user:pass@127.0.0.1:${emulatorPort()}/steal`],
];
const subscription = '00000000-0000-0000-0000-000000000000';
const usages = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const migrate = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2?api-version=2024-05-01`;

const titles = ['another host', 'another port', 'another scheme', 'userinfo that hides the host', 'userinfo on the upstream itself'];

describe.each(titles)('a URL to %s', (title) => {
  const link = () => foreignUrls().find(([candidate]) => candidate === title)![1];

  it('as nextLink: refused, listing or merging', async () => {
    gateway.emulator.script({ kind: 'answer', status: 200, body: { value: [{ id: 'a' }], nextLink: link() }, times: 2 });
    for (const path of [usages, `${usages}&gateway-pages=all`]) {
      const response = await request(`${gateway.url}/api/${path}`);
      expect(response.statusCode).toBe(502);
      expect(await response.body.json()).toMatchObject({ error: { code: 'UpstreamLinkRefused' } });
    }
    expect(foreignHits).toEqual([]);
  });

  it.each([['Location'], ['Azure-AsyncOperation']])('as %s of a container group: the app follows the resource itself instead', async (header) => {
    const name = `g${Math.random().toString(36).slice(2, 8)}`;
    gateway.emulator.script({
      kind: 'answer',
      method: 'PUT',
      status: 201,
      headers: { [header]: link() },
      body: { properties: { provisioningState: 'Pending' } },
    });
    const response = await request(
      `${gateway.url}/api/subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } }),
      },
    );
    expect(response.statusCode).toBe(201);
    expect(response.headers.location).toMatch(new RegExp(`^${gateway.url}/api/operations/`));
    await response.body.dump();
    await gateway.host.runTimer('orchestrationPoller');
    expect(foreignHits).toEqual([]);
  });

  it('as the migration location: the orchestration fails with UpstreamLinkRefused', async () => {
    gateway.emulator.script({ kind: 'answer', method: 'POST', status: 202, headers: { location: link() } });
    const response = await request(`${gateway.url}/api/${migrate}`, { method: 'POST' });
    expect(response.statusCode).toBe(202);
    await response.body.dump();
    const status = await request(`${gateway.url}/api/orchestrations/${response.headers['x-orchestration-id']}`);
    expect(await status.body.json()).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'UpstreamLinkRefused' } });
    await gateway.host.runTimer('orchestrationPoller');
    expect(foreignHits).toEqual([]);
  });
});

describe('a redirect from the upstream', () => {
  it.each(titles)('to %s is neither followed nor passed on, and a start it answers is no success', async (title) => {
    const [, target] = foreignUrls().find(([name]) => name === title)!;
    gateway.emulator.script({ kind: 'answer', status: 302, headers: { location: target }, times: 2 });
    const list = await request(`${gateway.url}/api/${usages}`);
    expect(list.statusCode).toBe(502);
    expect(list.headers.location).toBeUndefined();
    expect(await list.body.json()).toMatchObject({ error: { code: 'UpstreamBadResponse' } });

    const started = await request(`${gateway.url}/api/${migrate}`, {
      method: 'POST',
      body: '{"mode":"NewIP"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(started.statusCode).toBe(502);
    expect(started.headers.location).toBeUndefined();
    await started.body.dump();
    const [entry] = ((await (await request(`${gateway.url}/api/orchestrations?runtimeStatus=Completed`)).body.json()) as { value: unknown[] }).value;
    expect(entry).toBeUndefined();
    expect(foreignHits).toEqual([]);
  });
});
