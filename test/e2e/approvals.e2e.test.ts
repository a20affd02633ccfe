/**
 * Approvals through the built app on the local host, against the emulator and Azurite: an API
 * Management migration started by a key whose rule asks one approval sends nothing upstream until
 * another allowed approver approves it through the API, then runs once; rejection and expiry end
 * it NotApproved with no upstream call and say so in the end notification; who may decide
 * (never the starter, nor a caller the request's approvers do not name) and who may not even see
 * it; 410 once ended; the bound on waiting starts; two approvals racing on two app instances;
 * passthrough mode, where the starter's own read sends it; the stricter rule winning.
 */
import { randomBytes } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { emulatorToken, notifyingFastPolling, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';

jest.setTimeout(120_000);

const subscription = '00000000-0000-0000-0000-000000000000';
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const keys = {
  starter: 'starter-key-0123456789abcd',
  busy: 'busy-key-0123456789abcdef',
  approver: 'approver-key-0123456789ab',
  approver2: 'approver2-key-0123456789a',
  admin: 'admin-key-0123456789abcde',
  stranger: 'stranger-key-0123456789ab',
};
const name = (key: keyof typeof keys) => keyFingerprintOf(keys[key]);
const group = (resourceGroup: string) => `/subscriptions/${subscription}/resourceGroups/${resourceGroup}`;
const approvers = [name('approver'), name('approver2')];
const policy = [
  // Migrations anywhere without approval, but in the approval rules' scopes the stricter rule wins.
  { callers: [name('starter'), name('busy')], allow: ['read', 'write'] },
  { callers: [name('starter'), name('busy')], allow: ['ApiManagementService_MigrateToStv2'], scopes: [group('rg-apim')], approval: { count: 1, approvers } },
  { callers: [name('starter')], allow: ['write'], scopes: [group('rg-pair')], approval: { count: 2, approvers } },
  { callers: [name('starter')], allow: ['write'], scopes: [group('rg-quick')], approval: { count: 1, approvers, expiresAfterMinutes: 1 } },
  { callers: [name('admin')], allow: ['read', 'write', 'admin'] },
  { callers: [name('stranger')], allow: ['read'] },
];
const migrate = (resourceGroup: string, service: string) =>
  `subscriptions/${subscription}/resourceGroups/${resourceGroup}/providers/Vendor.ApiManagement/service/${service}/migrateToStv2?api-version=2024-05-01`;

let gateway: GatewayFixture;
let hooks: WebhookReceiver;
let second: AppProcess;
let passthrough: AppProcess;
/** Started first: it expires while the other tests run. */
let expiring: string;

beforeAll(async () => {
  hooks = await startWebhookReceiver(secret);
  gateway = await startGateway(
    {
      ...notifyingFastPolling(hooks.origin, secret),
      LOCAL_HOST_KEYS: JSON.stringify({ ...keys, master: 'master-key-0123456789abcdef' }),
      ACCESS_POLICY: JSON.stringify(policy),
      NOTIFY_URL: `${hooks.origin}/all`,
      APPROVAL_MAX_PENDING_PER_CALLER: '2',
    },
    { lroSteps: 1, retryAfterSeconds: 1 },
  );
  [second, passthrough] = await Promise.all([startApp(gateway.env), startApp({ ...gateway.env, UPSTREAM_AUTH: 'passthrough', UPSTREAM_STATIC_TOKEN: '' })]);
  gateway.others.push(second, passthrough);
  expiring = await started(await call('starter', 'POST', migrate('rg-quick', 'apim-expiring'), { body: '{}' }));
}, 120_000);
afterAll(async () => {
  await second?.stop();
  await passthrough?.stop();
  await gateway?.stop();
  await hooks?.close();
});

async function call(key: keyof typeof keys, method: string, path: string, options: { body?: string; headers?: Record<string, string>; baseUrl?: string } = {}) {
  const response = await request(`${options.baseUrl ?? gateway.app.url}/api/${path}`, {
    method: method as 'GET',
    body: options.body,
    headers: { 'x-functions-key': keys[key], ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
  });
  const text = await response.body.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read field by field, as the tests name them
  return { status: response.statusCode, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}
type Answer = Awaited<ReturnType<typeof call>>;

async function started(answer: Answer): Promise<string> {
  expect(answer.status).toBe(202);
  expect(answer.headers.location).toMatch(/\/api\/operations\//);
  return answer.headers['x-orchestration-id'] as string;
}

const decide = (key: keyof typeof keys, id: string, body: unknown, options: { headers?: Record<string, string>; baseUrl?: string } = {}) =>
  call(key, 'POST', `orchestrations/${id}/raiseEvent/Approval`, { body: JSON.stringify(body), ...options });
const migrations = (service: string) => gateway.emulator.upstreamRequests({ method: 'POST', pathIncludes: `/service/${service}/migrateToStv2` });
const errorCodeOf = (answer: Answer) => answer.json?.error?.code as string | undefined;

/** Waits for a condition, checking every 200 ms, with a generous deadline for a busy machine. */
async function until<T>(look: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 90_000): Promise<T> {
  const endsAt = Date.now() + deadlineMs;
  for (;;) {
    const value = await look();
    if (done(value) || Date.now() > endsAt) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const statusOf = (id: string, key: keyof typeof keys = 'starter') => call(key, 'GET', `orchestrations/${id}`);
const ended = (id: string) =>
  until(
    () => statusOf(id),
    (answer) => answer.status === 200,
  );

describe('a migration whose rule asks one approval', () => {
  let id: string;

  it('is stored waiting, with nothing sent upstream, and answered as a long-running start', async () => {
    id = await started(await call('starter', 'POST', migrate('rg-apim', 'apim1'), { body: '{"mode":"NewIP"}' }));
    const status = await statusOf(id);
    expect(status.status).toBe(202);
    expect(Number(status.headers['retry-after'])).toBeGreaterThan(1);
    expect(status.json).toMatchObject({ runtimeStatus: 'Pending', customStatus: { approval: { state: 'waiting', required: 1, approvers, decisions: [] } } });
    expect((await call('starter', 'GET', `operations/${id}`)).status).toBe(202);
    expect(migrations('apim1')).toEqual([]);
  });

  it('is read by its approvers, listed for them, and their console session says they may approve', async () => {
    expect((await statusOf(id, 'approver')).json?.runtimeStatus).toBe('Pending');
    const listed = await call('approver', 'GET', 'approvals');
    expect(listed.json?.value).toEqual(
      expect.arrayContaining([expect.objectContaining({ id, startedBy: name('starter'), name: 'ApiManagementService_MigrateToStv2' })]),
    );
    expect((await call('approver', 'GET', 'console/session')).json?.may).toMatchObject({ approve: true });
    expect((await call('stranger', 'GET', 'console/session')).json?.may).toMatchObject({ approve: false });
    // Being an approver opens nothing else: another caller's orchestration, the list, terminating.
    expect((await call('approver', 'GET', 'orchestrations')).status).toBe(403);
    expect((await call('approver', 'POST', `orchestrations/${id}/terminate`)).status).toBe(403);
  });

  it.each<[string, keyof typeof keys, unknown, number, string]>([
    ['the starter approving its own start', 'starter', { approved: true }, 403, 'ApprovalNotAllowed'],
    ['an admin the request does not name as an approver', 'admin', { approved: true }, 403, 'ApprovalNotAllowed'],
    ['a caller that may not see it', 'stranger', { approved: true }, 404, 'NotFound'],
    ['a body without a boolean', 'approver', { approved: 'yes' }, 400, 'InvalidRequest'],
    ['an unknown field', 'approver', { approved: true, by: 'someone' }, 400, 'InvalidRequest'],
    ['a reason too long', 'approver', { approved: false, reason: 'x'.repeat(501) }, 400, 'InvalidRequest'],
  ])('refuses %s', async (_title, key, body, status, code) => {
    const answer = await decide(key, id, body);
    expect(answer.status).toBe(status);
    expect(errorCodeOf(answer)).toBe(code);
    expect(migrations('apim1')).toEqual([]);
  });

  it('runs once another approver approves it (through the console), recording the decision', async () => {
    const approved = await decide('approver', id, { approved: true, reason: 'change window' }, { headers: { 'x-gateway-client': 'console' } });
    expect(approved.status).toBe(202);
    expect(approved.json?.customStatus?.approval).toMatchObject({
      state: 'approved',
      decisions: [{ by: name('approver'), approved: true, reason: 'change window', route: 'console' }],
    });
    const final = await ended(id);
    expect(final.json).toMatchObject({ runtimeStatus: 'Completed' });
    expect(migrations('apim1')).toHaveLength(1);
    expect(JSON.parse(migrations('apim1')[0]!.body)).toEqual({ mode: 'NewIP' });
    expect((await decide('approver2', id, { approved: true })).status).toBe(410);
    expect(gateway.app.lines.some((line) => line.includes('"event":"approval"') && line.includes(id) && line.includes('"route":"console"'))).toBe(true);
  });
});

it('ends a rejected migration NotApproved with no upstream call, and its end notification says who and why', async () => {
  const id = await started(await call('starter', 'POST', migrate('rg-apim', 'apim-rejected'), { body: '{}' }));
  const rejected = await decide('approver2', id, { approved: false, reason: 'not during the freeze' });
  expect(rejected.status).toBe(202);
  expect(rejected.json).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' } });
  expect(rejected.json?.failure.message).toContain(name('approver2'));
  expect(rejected.json?.failure.message).toContain('not during the freeze');
  const operation = await call('starter', 'GET', `operations/${id}`);
  expect(operation.status).toBe(403);
  expect(errorCodeOf(operation)).toBe('NotApproved');
  expect((await decide('approver', id, { approved: true })).status).toBe(410);
  const event = await until(
    async () => hooks.deliveries.find((delivery) => (delivery.event?.data as { id?: string } | undefined)?.id === id),
    (found) => found !== undefined,
  );
  expect(event?.verified).toBe(true);
  expect(event?.event?.data).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' }, customStatus: { approval: { state: 'rejected' } } });
  expect(migrations('apim-rejected')).toEqual([]);
});

it('ends a terminated waiting migration with no upstream call', async () => {
  const id = await started(await call('starter', 'POST', migrate('rg-apim', 'apim-terminated'), { body: '{}' }));
  expect((await call('admin', 'POST', `orchestrations/${id}/terminate`)).json?.runtimeStatus).toBe('Terminated');
  expect((await decide('approver', id, { approved: true })).status).toBe(410);
  expect(migrations('apim-terminated')).toEqual([]);
});

it("runs a migration outside the approval rules' scopes at once: only where a rule asks approval is it needed", async () => {
  const answer = await call('starter', 'POST', migrate('rg-free', 'apim-free'), { body: '{}' });
  expect(answer.status).toBe(202);
  expect(migrations('apim-free')).toHaveLength(1);
});

it('refuses a start past APPROVAL_MAX_PENDING_PER_CALLER with 429 and Retry-After, storing nothing; a repeat of one waiting joins it', async () => {
  const waiting: string[] = [];
  for (const service of ['busy1', 'busy2']) waiting.push(await started(await call('busy', 'POST', migrate('rg-apim', service), { body: '{}' })));
  // At the bound, the same start again (an SDK retrying) is the one waiting, not a new one refused.
  expect(await started(await call('busy', 'POST', migrate('rg-apim', 'busy1'), { body: '{}' }))).toBe(waiting[0]);
  const service = BlobServiceClient.fromConnectionString(gateway.azurite.connectionString).getContainerClient('gateway-orchestrations');
  const stored = async () => {
    const names: string[] = [];
    for await (const blob of service.listBlobsFlat()) names.push(blob.name);
    return names.sort();
  };
  const before = await stored();
  const refused = await call('busy', 'POST', migrate('rg-apim', 'busy3'), { body: '{}' });
  expect(refused.status).toBe(429);
  expect(errorCodeOf(refused)).toBe('TooManyPendingApprovals');
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect((await stored()).filter((blob) => !blob.startsWith('chat-') && !blob.startsWith('janitor'))).toEqual(
    before.filter((blob) => !blob.startsWith('chat-') && !blob.startsWith('janitor')),
  );
  expect(migrations('busy3')).toEqual([]);
});

it('stores and sends the body its approvers saw: a field given twice keeps one value, and a secret in the other never reaches storage', async () => {
  const body = '{"mode":"NewIP","properties":{"password":"s3cret-twice","password":""},"mode":"PreserveIp"}';
  const id = await started(await call('starter', 'POST', migrate('rg-apim', 'apim-twice'), { body }));
  const service = BlobServiceClient.fromConnectionString(gateway.azurite.connectionString).getContainerClient('gateway-orchestrations');
  for await (const blob of service.listBlobsFlat()) {
    // A blob listed may be gone by its read (another test's start ending meanwhile): what is gone holds nothing.
    const text = await service
      .getBlobClient(blob.name)
      .downloadToBuffer()
      .then((bytes) => bytes.toString('utf8'))
      .catch((error: { statusCode?: number }) => (error.statusCode === 404 ? '' : Promise.reject(error)));
    expect([blob.name, text.includes('s3cret-twice')]).toEqual([blob.name, false]);
  }
  expect((await decide('approver', id, { approved: true })).status).toBe(202);
  await until(
    async () => migrations('apim-twice'),
    (sent) => sent.length > 0,
  );
  expect(migrations('apim-twice').map((sent) => JSON.parse(sent.body) as unknown)).toEqual([{ mode: 'PreserveIp', properties: { password: '' } }]);
});

it('sends exactly once when the two approvals a start needs race on two app instances', async () => {
  const id = await started(await call('starter', 'POST', migrate('rg-pair', 'apim-pair'), { body: '{}' }));
  const answers = await Promise.all([decide('approver', id, { approved: true }), decide('approver2', id, { approved: true }, { baseUrl: second.url })]);
  expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
  const final = await ended(id);
  expect(final.json?.runtimeStatus).toBe('Completed');
  expect(final.json?.customStatus?.approval?.decisions).toHaveLength(2);
  expect(migrations('apim-pair')).toHaveLength(1);
});

it("sends an approved start in passthrough mode on its starter's next read, with its token", async () => {
  const bearer = { authorization: `Bearer ${emulatorToken}` };
  const id = await started(await call('starter', 'POST', migrate('rg-apim', 'apim-passthrough'), { body: '{}', headers: bearer, baseUrl: passthrough.url }));
  const approved = await decide('approver', id, { approved: true }, { baseUrl: passthrough.url });
  expect(approved.json?.runtimeStatus).toBe('Pending');
  // Neither the approval nor the poller sends it: the app holds no token.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  expect(migrations('apim-passthrough')).toEqual([]);
  const read = await call('starter', 'GET', `orchestrations/${id}`, { headers: bearer, baseUrl: passthrough.url });
  expect(read.json?.runtimeStatus).toBe('Running');
  expect(migrations('apim-passthrough')).toHaveLength(1);
  expect(migrations('apim-passthrough')[0]!.headers.authorization).toBe(`Bearer ${emulatorToken}`);
});

it('ends a start nobody approved in time NotApproved within a poller run of its expiry, with no upstream call', async () => {
  const final = await until(
    () => statusOf(expiring),
    (answer) => answer.status === 200,
    150_000,
  );
  expect(final.json).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' }, customStatus: { approval: { state: 'expired' } } });
  expect(Date.parse(final.json?.endedTime) - Date.parse(final.json?.customStatus.approval.expiresAt)).toBeLessThan(30_000);
  expect(migrations('apim-expiring')).toEqual([]);
  expect((await decide('approver', expiring, { approved: true })).status).toBe(410);
}, 180_000);
