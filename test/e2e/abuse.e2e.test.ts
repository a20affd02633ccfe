/**
 * Abuse: oversized and deeply nested bodies, wrong content types, header injection, `..` and
 * encoded slashes in path parameters and in `{scope}`. Each is answered with a 4xx in the
 * documented shape (or by the HTTP layer itself), before any upstream call.
 */
import { request as rawRequest } from 'node:http';
import { connect } from 'node:net';
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = await startInProcessGateway();
});
afterAll(async () => {
  await gateway.stop();
});
beforeEach(() => gateway.emulator.reset());

const subscription = '00000000-0000-0000-0000-000000000000';
const group = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const validGroup = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } });
const schedules = (scope: string) => `${scope}/providers/Vendor.Authorization/roleAssignmentSchedules?api-version=2020-10-01`;

it.each<[string, string, string, Record<string, string>, string | undefined, number[]]>([
  [
    'a 5 MB body',
    group('big'),
    'PUT',
    { 'content-type': 'application/json' },
    JSON.stringify({ properties: { containers: [] }, pad: 'x'.repeat(5 * 1024 * 1024) }),
    [413],
  ],
  ['a body nested 10,000 deep', group('deep'), 'PUT', { 'content-type': 'application/json' }, `${'['.repeat(10_000)}${']'.repeat(10_000)}`, [400]],
  ['a text/plain body', group('text'), 'PUT', { 'content-type': 'text/plain' }, validGroup, [415]],
  ['an XML body', group('xml'), 'PUT', { 'content-type': 'application/xml' }, '<containerGroup/>', [415]],
  ['a multipart body', group('multi'), 'PUT', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', [415]],
  ['a JSON array instead of an object', group('array'), 'PUT', { 'content-type': 'application/json' }, '[1,2,3]', [400]],
  ['.. as a path parameter', group('..'), 'PUT', { 'content-type': 'application/json' }, validGroup, [400, 404]],
  ['an encoded .. as a path parameter', group('%2e%2e'), 'PUT', { 'content-type': 'application/json' }, validGroup, [400, 404]],
  ['an encoded slash in a path parameter', group('a%2Fb'), 'PUT', { 'content-type': 'application/json' }, validGroup, [400]],
  ['an encoded backslash in a path parameter', group('a%5C..%5Cb'), 'PUT', { 'content-type': 'application/json' }, validGroup, [400]],
  ['a control character in a path parameter', group('a%0Ab'), 'PUT', { 'content-type': 'application/json' }, validGroup, [400]],
  ['an encoded ../ inside {scope}', schedules('subscriptions/x/resourceGroups/%2e%2e%2F%2e%2e'), 'GET', {}, undefined, [400]],
  ['an encoded slash and .. inside {scope}', schedules('subscriptions/x%2F..%2F..%2Fproviders'), 'GET', {}, undefined, [400]],
  [
    'a $filter carrying more than one form',
    `subscriptions/x/providers/Vendor.Authorization/roleAssignmentSchedules?api-version=2020-10-01&$filter=${encodeURIComponent('atScope() or 1 eq 1')}`,
    'GET',
    {},
    undefined,
    [400],
  ],
])('%s', async (_title, path, method, headers, body, statuses) => {
  // node:http sends the path as written; a WHATWG URL client would resolve `..` first.
  const response = await new Promise<{ statusCode: number; text: string }>((resolve, reject) => {
    const outgoing = rawRequest({ host: '127.0.0.1', port: new URL(gateway.url).port, path: `/api/${path}`, method, headers }, (incoming) => {
      let text = '';
      incoming.on('data', (chunk: Buffer) => (text += chunk.toString()));
      incoming.on('end', () => resolve({ statusCode: incoming.statusCode ?? 0, text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
  const text = response.text;
  expect(statuses).toContain(response.statusCode);
  expect(JSON.parse(text)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  expect(gateway.emulator.upstreamRequests()).toEqual([]);
});

it('resolves literal dot segments before routing, as Kestrel does: no upstream path holds ..', async () => {
  const path = `/api/${schedules('subscriptions/x/resourceGroups/../../providers')}`;
  await new Promise<void>((resolve, reject) => {
    const outgoing = rawRequest({ host: '127.0.0.1', port: new URL(gateway.url).port, path }, (incoming) => incoming.resume().on('end', resolve));
    outgoing.on('error', reject);
    outgoing.end();
  });
  expect(gateway.emulator.upstreamRequests().filter((seen) => seen.path.includes('..'))).toEqual([]);
});

it('never echoes a correlation id that could inject text', async () => {
  for (const evil of ['abc def', '<script>', 'x'.repeat(200), 'id"with"quotes']) {
    const response = await request(
      `${gateway.url}/api/subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`,
      {
        headers: { 'x-ms-client-request-id': evil },
      },
    );
    await response.body.dump();
    expect(response.headers['x-correlation-id']).not.toBe(evil);
    expect(response.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  }
});

it('answers a raw request with CR/LF smuggled into a header with 400, and keeps serving', async () => {
  const port = Number(new URL(gateway.url).port);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-client-request-id: a\rx-injected: 1\r\n\r\n`);
    });
    let data = '';
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', reject);
  });
  expect(answer).toMatch(/^HTTP\/1\.1 400/);
  const health = await request(`${gateway.url}/api/health`);
  expect(health.statusCode).toBe(200);
  await health.body.dump();
});
