/**
 * Certificates through the app over HTTP: the timer keeps three environments, metadata
 * without the secret, the refresh route and the download route under one limit, and two host
 * processes refreshing the same environment at once making one upstream call.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const environments = [1, 2, 3].map((index) => ({ projectId: 40 + index, environmentId: randomUUID() }));
const downloadOnly = { projectId: 77, environmentId: randomUUID() };
const masterKey = 'master-key-for-tests-0001';
const callerKey = 'caller-key-for-tests-0001';

let gateway: GatewayFixture;
let second: AppProcess;
beforeAll(async () => {
  gateway = await startGateway({ CERT_ENVIRONMENTS: JSON.stringify(environments), LOCAL_HOST_KEYS: JSON.stringify({ master: masterKey, caller: callerKey }) });
  second = await startApp(gateway.env);
  gateway.others.push(second);
});
afterAll(async () => {
  await second.stop();
  await gateway.stop();
});

const downloads = (environmentId?: string) => gateway.emulator.upstreamRequests({ pathIncludes: environmentId ?? '/rsatdownload/' });
const headers = { 'x-functions-key': callerKey };

async function runTimer(baseUrl: string) {
  const response = await request(`${baseUrl}/admin/functions/certificateRefresher`, {
    method: 'POST',
    headers: { 'x-functions-key': masterKey, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.statusCode).toBe(202);
  await response.body.dump();
}

async function waitFor(check: () => Promise<boolean>, limitMs = 10_000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

it('two hosts forcing a refresh of one environment at once make one upstream call', async () => {
  const target = { ...environments[1]!, force: true };
  const [a, b] = await Promise.all(
    [gateway.app.url, second.url].map(async (baseUrl) => {
      const response = await request(`${baseUrl}/api/certificates/refresh`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(target),
      });
      expect(response.statusCode).toBe(200);
      return ((await response.body.json()) as { results: { outcome: string }[] }).results[0]!.outcome;
    }),
  );
  expect([a, b].sort()).toEqual(['downloaded', 'rate-limited']);
  expect(downloads()).toHaveLength(1);
});

it('metadata of an environment never fetched: 404 NotFound, saying so (as chat `cert` says it)', async () => {
  const response = await request(gateway.api(`certificates/88/${randomUUID().toUpperCase()}`), { headers });
  expect(response.statusCode).toBe(404);
  expect(await response.body.json()).toMatchObject({ error: { code: 'NotFound', message: 'No certificate has been fetched for this environment.' } });
});

it('the timer downloads each configured environment that needs it; metadata never shows the secret', async () => {
  // The environment refreshed above is fresh: the timer downloads the other two.
  await runTimer(gateway.app.url);
  await waitFor(async () => downloads().length === 3);
  const metadataOf = async (environment: (typeof environments)[number]) => {
    const response = await request(gateway.api(`certificates/${environment.projectId}/${environment.environmentId}`), { headers });
    return { status: response.statusCode, text: await response.body.text() };
  };
  await waitFor(async () => (await Promise.all(environments.map(metadataOf))).every((answer) => answer.status === 200));
  const answer = await metadataOf(environments[0]!);
  expect(JSON.parse(answer.text)).toMatchObject({ current: { thumbprint: expect.any(String), fetchedBy: 'timer', expiresAt: expect.any(String) } });
  expect(answer.text).not.toMatch(/Secret/i);

  await runTimer(gateway.app.url);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(downloads()).toHaveLength(3);
  expect(gateway.app.lines.join('\n')).not.toContain('CertificateSecretEncoded');
});

it('the refresh route says what happened per environment and refuses what is not configured', async () => {
  const response = await request(gateway.api('certificates/refresh'), { method: 'POST', headers });
  const body = (await response.body.json()) as { results: { outcome: string; projectId: number }[] };
  expect(body.results.map((result) => result.outcome)).toEqual(['fresh', 'fresh', 'fresh']);
  const unknown = await request(gateway.api('certificates/refresh'), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(downloadOnly),
  });
  expect(unknown.statusCode).toBe(404);
  await unknown.body.dump();
  const bad = await request(gateway.api('certificates/refresh'), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ projectId: 'x', environmentId: 'y' }),
  });
  expect(bad.statusCode).toBe(400);
  expect(((await bad.body.json()) as { error: { details: { target: string }[] } }).error.details.map((detail) => detail.target)).toEqual([
    'projectId',
    'environmentId',
  ]);
});

it('the documented download route obeys the same limit: the second call within the minute gets 429', async () => {
  gateway.emulator.reset();
  const path = `environmentinfo/v1/rsatdownload/project/${downloadOnly.projectId}/environment/${downloadOnly.environmentId}`;
  const first = await request(gateway.api(path), { headers });
  expect(first.statusCode).toBe(200);
  expect(await first.body.json()).toMatchObject({ IsSuccess: true });
  const secondCall = await request(`${second.url}/api/${path}`, { headers });
  expect(secondCall.statusCode).toBe(429);
  expect(Number(secondCall.headers['retry-after'])).toBeGreaterThan(0);
  expect(await secondCall.body.json()).toMatchObject({ error: { code: 'RateLimited' } });
  expect(downloads(downloadOnly.environmentId)).toHaveLength(1);
});

it('a retry-after beyond reason from the service is held to a day: the route keeps answering 429, never 500', async () => {
  const environment = { projectId: 78, environmentId: randomUUID() };
  const path = `environmentinfo/v1/rsatdownload/project/${environment.projectId}/environment/${environment.environmentId}`;
  gateway.emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '99999999999999' }, pathPattern: environment.environmentId });
  const throttled = await request(gateway.api(path), { headers });
  expect(throttled.statusCode).toBe(429);
  await throttled.body.dump();
  for (const baseUrl of [gateway.app.url, second.url]) {
    const next = await request(`${baseUrl}/api/${path}`, { headers });
    expect(next.statusCode).toBe(429);
    expect(await next.body.json()).toMatchObject({ error: { code: 'RateLimited' } });
    expect(Number(next.headers['retry-after'])).toBeLessThanOrEqual(24 * 3600 + 60);
  }
  expect(downloads(environment.environmentId)).toHaveLength(1);
});
