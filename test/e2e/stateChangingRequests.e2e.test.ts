/**
 * What a state-changing request must be to be taken, through the built app on the local host:
 * one from a page of another origin (a foreign `Origin`, `Sec-Fetch-Site: cross-site` or
 * `same-site`) is refused 403 before anything is judged, so a page an approver is lured to cannot
 * approve a start or terminate orchestrations in their name; a body not declared JSON is 415; a
 * bulk action reads its parameters in any case and refuses one it does not take; and a start held
 * for approval is answered without waiting for its announcement to a webhook that never answers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(120_000);

const subscription = '00000000-0000-0000-0000-000000000000';
const keys = { starter: 'starter-key-0123456789abcd', approver: 'approver-key-0123456789ab' };
const policy = [
  { callers: [keyFingerprintOf(keys.starter)], allow: ['read', 'write'] },
  {
    callers: [keyFingerprintOf(keys.starter)],
    allow: ['ApiManagementService_MigrateToStv2'],
    scopes: [`/subscriptions/${subscription}/resourceGroups/rg-apim`],
    approval: { count: 1, approvers: [keyFingerprintOf(keys.approver)] },
  },
  { callers: [keyFingerprintOf(keys.approver)], allow: ['read', 'write', 'admin'] },
  // A Slack user turns Slack on, and with it the approval announcement.
  { callers: ['slack:T1/U1'], allow: ['read'] },
];
const migrate = (service: string) =>
  `subscriptions/${subscription}/resourceGroups/rg-apim/providers/Vendor.ApiManagement/service/${service}/migrateToStv2?api-version=2024-05-01`;

let gateway: GatewayFixture;
/** The approvers' webhook: it takes every request and never answers. */
let silent: Server;
const held: IncomingMessage[] = [];

beforeAll(async () => {
  silent = createServer((incoming) => held.push(incoming));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  gateway = await startGateway({
    LOCAL_HOST_KEYS: JSON.stringify({ ...keys, master: 'master-key-0123456789abcdef' }),
    ACCESS_POLICY: JSON.stringify(policy),
    SLACK_SIGNING_SECRET: '0123456789abcdef0123456789abcdef',
    SLACK_APPROVAL_WEBHOOK_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/services/T1/B1/approvals`,
    // Far longer than the tests wait for an answer: the announcement stays pending throughout.
    NOTIFY_TIMEOUT_MS: '60000',
  });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  for (const incoming of held) incoming.socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

async function call(key: keyof typeof keys, method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}) {
  const separator = path.includes('?') ? '&' : '?';
  const response = await request(`${gateway.app.url}/api/${path}${separator}code=${keys[key]}`, {
    method: method as 'GET',
    body: options.body,
    headers: options.headers,
  });
  const text = await response.body.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read field by field, as the tests name them
  return { status: response.statusCode, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}
const json = { 'content-type': 'application/json' };
const stateOf = async (id: string) =>
  (await call('approver', 'GET', `orchestrations/${id}`)).json as { runtimeStatus: string; customStatus?: { approval?: { state: string } } };

let waiting = '';

it('answers a start held for approval at once, while its announcement to a webhook that never answers is still pending', async () => {
  const started = await call('starter', 'POST', migrate('apim-cross'), { body: '{"mode":"NewIP"}', headers: json });
  expect(started.status).toBe(202);
  waiting = started.headers['x-orchestration-id'] as string;
  expect((await stateOf(waiting)).customStatus?.approval?.state).toBe('waiting');
  // The announcement went out, and is still unanswered: the start's answer did not wait for it.
  for (let tries = 0; held.length === 0 && tries < 100; tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(held).toHaveLength(1);
  expect(held[0]!.socket.destroyed).toBe(false);
});

it('refuses a decision from a page of another origin, 403, and records nothing', async () => {
  const body = '{"approved":true}';
  const foreign: Record<string, string>[] = [
    { origin: 'https://evil.example' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site', origin: 'https://sibling.example' },
    { origin: 'null' },
  ];
  for (const headers of foreign) {
    const answer = await call('approver', 'POST', `orchestrations/${waiting}/raiseEvent/Approval`, { body, headers: { ...headers, ...json } });
    expect({ headers, status: answer.status, code: answer.json?.error?.code }).toEqual({ headers, status: 403, code: 'CrossSiteRequest' });
  }
  expect((await stateOf(waiting)).customStatus?.approval?.state).toBe('waiting');
  expect(gateway.emulator.upstreamRequests({ method: 'POST', pathIncludes: '/service/apim-cross/migrateToStv2' })).toEqual([]);
});

it('refuses a decision whose body is not declared JSON, 415, and records nothing', async () => {
  const answer = await call('approver', 'POST', `orchestrations/${waiting}/raiseEvent/Approval`, { body: '{"approved":true}' });
  expect(answer).toMatchObject({ status: 415, json: { error: { code: 'UnsupportedMediaType' } } });
  expect((await stateOf(waiting)).customStatus?.approval?.state).toBe('waiting');
});

it("takes a decision from the app's own origin, as the console sends it", async () => {
  const ownOrigin = new URL(gateway.app.url).origin;
  const rejected = await call('approver', 'POST', `orchestrations/${waiting}/raiseEvent/Approval`, {
    body: '{"approved":false,"reason":"not today"}',
    headers: { ...json, origin: ownOrigin, 'sec-fetch-site': 'same-origin' },
  });
  expect(rejected.status).toBe(202);
  expect((await stateOf(waiting)).runtimeStatus).toBe('Failed');
});

describe('a bulk terminate', () => {
  let running = '';
  beforeAll(async () => {
    const started = await call('starter', 'POST', migrate('apim-bulk').replace('rg-apim', 'rg-other'), { body: '{"mode":"NewIP"}', headers: json });
    running = started.headers['x-orchestration-id'] as string;
  });
  const prefix = () => running.slice(0, 8);

  it('from a page of another origin is refused, 403, and terminates nothing', async () => {
    const answer = await call('approver', 'POST', `orchestrations/terminate?instanceIdPrefix=${prefix()}`, { headers: { origin: 'https://evil.example' } });
    expect(answer).toMatchObject({ status: 403, json: { error: { code: 'CrossSiteRequest' } } });
    expect((await stateOf(running)).runtimeStatus).not.toBe('Terminated');
  });

  it.each(['dryrun=true', 'DryRun=TRUE', 'DRYRUN=true'])('reads %s as a dry run: it lists and terminates nothing', async (dryRun) => {
    const answer = await call('approver', 'POST', `orchestrations/terminate?instanceIdPrefix=${prefix()}&${dryRun}`);
    expect(answer).toMatchObject({ status: 200, json: { dryRun: true, instanceIds: [running] } });
    expect((await stateOf(running)).runtimeStatus).not.toBe('Terminated');
  });

  it('refuses a parameter it does not take, naming it, and terminates nothing', async () => {
    const answer = await call('approver', 'POST', `orchestrations/terminate?instanceIdPrefix=${prefix()}&dryRn=true`);
    expect(answer.status).toBe(400);
    expect(answer.json?.error?.details).toEqual([expect.objectContaining({ target: 'dryRn' })]);
    expect((await stateOf(running)).runtimeStatus).not.toBe('Terminated');
  });
});
