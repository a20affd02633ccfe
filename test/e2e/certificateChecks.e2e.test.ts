/**
 * The certificate checks over HTTP, through the built app: the timer and `POST certificates/refresh` refuse
 * each bad bundle the emulator can make and keep the current certificate; `health` names every
 * environment running out, turns Degraded within CERT_ALERT_DAYS, and shows no secret; a good
 * bundle takes an environment off the list.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { faultRefusals as refusals } from '../helpers/certificateRefusals';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

/** One environment per refusal, so a single timer run meets every one. */
const environments = refusals.map((_refusal, index) => ({ projectId: 60 + index, environmentId: randomUUID() }));
const masterKey = 'master-key-for-tests-0002';
const callerKey = 'caller-key-for-tests-0002';
const headers = { 'x-functions-key': callerKey, 'content-type': 'application/json' };

let gateway: GatewayFixture;
beforeAll(async () => {
  gateway = await startGateway(
    {
      CERT_ENVIRONMENTS: JSON.stringify(environments),
      LOCAL_HOST_KEYS: JSON.stringify({ master: masterKey, caller: callerKey }),
      // Timers only when the test runs them; a one-second window so refreshes need not wait a minute.
      LOCAL_HOST_TIMERS: 'off',
      CERT_RATE_WINDOW_SECONDS: '1',
      HEALTH_CACHE_SECONDS: '0',
    },
    { certificateWindowMs: 1000 },
  );
});
afterAll(async () => {
  await gateway.stop();
});

interface CertificateRecord {
  current: { thumbprint: string; expiresAt: string } | null;
  lastAttempt: { trigger: string; outcome: string; at: string; error?: { code: string } } | null;
}

async function recordOf(environment: (typeof environments)[number]): Promise<CertificateRecord> {
  const response = await request(gateway.api(`certificates/${environment.projectId}/${environment.environmentId}`), { headers });
  expect(response.statusCode).toBe(200);
  return (await response.body.json()) as CertificateRecord;
}

async function health() {
  const response = await request(gateway.api('health'));
  const text = await response.body.text();
  const body = JSON.parse(text) as {
    status: string;
    certificates?: { environments: number; atRisk: { projectId: number; daysLeft: number | null; lastErrorCode: string; alert: boolean }[] };
  };
  return { status: response.statusCode, text, body };
}

const pauseForTheWindow = () => new Promise((resolve) => setTimeout(resolve, 1100));
const scriptEach = (certificate: (index: number) => object) =>
  environments.forEach((environment, index) =>
    gateway.emulator.script({ kind: 'certificate', certificate: certificate(index), pathPattern: environment.environmentId }),
  );

let current: CertificateRecord['current'][];

it('starts with a certificate per environment, each 5 days from expiry: health lists none, as no refresh failed', async () => {
  scriptEach(() => ({ validForDays: 5 }));
  const response = await request(gateway.api('certificates/refresh'), { method: 'POST', headers, body: '{}' });
  const { results } = (await response.body.json()) as { results: { outcome: string }[] };
  expect(results.map((result) => result.outcome)).toEqual(environments.map(() => 'downloaded'));
  current = await Promise.all(environments.map(async (environment) => (await recordOf(environment)).current));
  const report = await health();
  expect(report.body).toMatchObject({ status: 'Healthy', certificates: { environments: environments.length, atRisk: [] } });
});

it('the timer refuses each bad bundle, keeps each current certificate, and health names every environment running out', async () => {
  await pauseForTheWindow();
  scriptEach((index) => ({ fault: refusals[index]![0] }));
  const started = new Date().toISOString();
  const run = await request(`${gateway.app.url}/admin/functions/certificateRefresher`, {
    method: 'POST',
    headers: { 'x-functions-key': masterKey, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(run.statusCode).toBe(202);
  await run.body.dump();
  const deadline = Date.now() + 15_000;
  let records = await Promise.all(environments.map(recordOf));
  while (!records.every((record) => record.lastAttempt?.trigger === 'timer' && record.lastAttempt.at >= started)) {
    if (Date.now() > deadline) throw new Error(`the timer did not refresh every environment: ${JSON.stringify(records)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    records = await Promise.all(environments.map(recordOf));
  }
  records.forEach((record, index) => {
    expect(record.lastAttempt).toMatchObject({ outcome: 'failed', error: { code: refusals[index]![1] } });
    expect(record.current).toEqual(current[index]);
  });

  const report = await health();
  expect(report.status).toBe(503);
  expect(report.body.status).toBe('Degraded');
  expect(report.body.certificates!.atRisk).toEqual(
    environments.map((environment, index) => ({
      ...environment,
      expiresAt: current[index]!.expiresAt,
      daysLeft: 4,
      lastErrorCode: refusals[index]![1],
      alert: true,
    })),
  );
  // Anonymous: codes and dates only, never a message, a secret or a password.
  for (const secret of gateway.emulator.context.lifecycle.issuedSecrets) expect(report.text).not.toContain(secret);
  expect(report.text).not.toMatch(/message/i);
  // One warning line per environment running out, this run.
  const warnings = gateway.app.lines.filter((line) => line.includes('"certificate-at-risk"') && line.includes('"trigger":"timer"'));
  expect(warnings).toHaveLength(environments.length);
});

it('POST certificates/refresh refuses each bad bundle with its code and keeps each current certificate', async () => {
  await pauseForTheWindow();
  scriptEach((index) => ({ fault: refusals[index]![0], encryption: index % 2 ? '3des' : 'aes256' }));
  const response = await request(gateway.api('certificates/refresh'), { method: 'POST', headers, body: JSON.stringify({ force: true }) });
  expect(response.statusCode).toBe(200);
  const { results } = (await response.body.json()) as { results: { outcome: string; error?: { code: string } }[] };
  expect(results.map((result) => [result.outcome, result.error?.code])).toEqual(refusals.map(([, code]) => ['failed', code]));
  const records = await Promise.all(environments.map(recordOf));
  records.forEach((record, index) => expect(record.current).toEqual(current[index]));
});

it('a good bundle takes its environment off the list; health stays Degraded while others run out', async () => {
  await pauseForTheWindow();
  const [renewed] = environments;
  const response = await request(gateway.api('certificates/refresh'), { method: 'POST', headers, body: JSON.stringify({ ...renewed, force: true }) });
  expect(((await response.body.json()) as { results: { outcome: string }[] }).results[0]!.outcome).toBe('downloaded');
  const report = await health();
  expect(report.body.status).toBe('Degraded');
  expect(report.body.certificates!.atRisk.map((entry) => entry.projectId)).toEqual(environments.slice(1).map((environment) => environment.projectId));
});
