/**
 * The console's security headers on every answer of its routes, not only on the files it
 * serves: a 404 for a file it does not have (traversal attempts included), the redirect of
 * `console/` to `console`, a refused session, and the session itself, which no cache keeps. The
 * real registrations in process, no browser.
 */
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

jest.setTimeout(60_000);

const readerKey = 'console-headers-reader-0001';
const strangerKey = 'console-headers-stranger-01';

let gateway: InProcessGateway;

beforeAll(async () => {
  gateway = await startInProcessGateway({ ACCESS_POLICY: JSON.stringify([{ callers: [keyFingerprintOf(readerKey)], allow: ['read'] }]) });
}, 60_000);
afterAll(async () => {
  await gateway.stop();
});

async function get(path: string, key?: string) {
  const response = await request(`${gateway.url}/api/${path}`, { headers: key ? { 'x-functions-key': key } : {} });
  const body = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body };
}

function expectConsoleHeaders(headers: Record<string, unknown>) {
  expect(String(headers['content-security-policy'])).toContain("frame-ancestors 'none'");
  expect(String(headers['content-security-policy'])).toContain("default-src 'self'");
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe("the console's headers", () => {
  it.each(['console/assets/evil.js', 'console/assets/..%2f..%2fhost.json', 'console/assets/..%5c..%5chost.json', 'console/assets/console.js%00'])(
    'are on the 404 of %s, which serves nothing else',
    async (path) => {
      const answer = await get(path);
      expect(answer.status).toBe(404);
      expectConsoleHeaders(answer.headers);
    },
  );

  it('are on console/assets/%2e%2e, a dot segment the host resolves to the page itself', async () => {
    const answer = await get('console/assets/%2e%2e');
    // URL parsers read `%2e%2e` as `..`: the path is then `console/`, sent to the page, never a file beside it.
    expect([404, 301]).toContain(answer.status);
    if (answer.status === 301) expect(answer.headers.location).toBe('../console');
    expectConsoleHeaders(answer.headers);
  });

  it('are on the redirect of console/ to the page, where its relative links resolve', async () => {
    const slash = await get('console/');
    expect(slash.status).toBe(301);
    expect(slash.headers.location).toBe('../console');
    expectConsoleHeaders(slash.headers);
    const page = await get('console');
    expect(page.status).toBe(200);
    expect(page.body).toContain('href="console/assets/console.css"');
  });

  it('are on a refused session, and the session is never cached', async () => {
    const refused = await get('console/session', strangerKey);
    expect(refused.status).toBe(403);
    expectConsoleHeaders(refused.headers);
    const session = await get('console/session', readerKey);
    expect(session.status).toBe(200);
    expectConsoleHeaders(session.headers);
    expect(session.headers['cache-control']).toBe('no-store');
  });

  it('answer what openapi.json says the session holds, every right named', async () => {
    const session = JSON.parse((await get('console/session', readerKey)).body) as Record<string, Record<string, unknown>>;
    const openApi = JSON.parse((await get('openapi.json', readerKey)).body) as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, { properties?: object }> } }> }> } }
      >;
    };
    const described = openApi.paths['/console/session']!.get.responses['200']!.content['application/json']!.schema.properties;
    expect(Object.keys(session).sort()).toEqual(Object.keys(described).sort());
    expect(Object.keys(session.may!).sort()).toEqual(Object.keys(described.may!.properties!).sort());
  });
});
