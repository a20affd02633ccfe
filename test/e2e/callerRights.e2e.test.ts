/**
 * Caller rights through the built app on the local host: a chat-ops bot's
 * key that may read and start container groups in one resource group, an automation key that
 * writes in the subscription, operators by app role through App Service Authentication (with
 * WEBSITE_AUTH_ENABLED=true and without), orchestrations that belong to their starters (who may
 * always follow them) and to admins within their scopes, a
 * caller's share of upstream reads, and the management service's remaining budget.
 */
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { runAppExpectingFailure, startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const subscription = '00000000-0000-0000-0000-000000000000';
const keys = {
  bot: 'bot-key-0123456789abcdef',
  otherBot: 'other-bot-key-0123456789',
  automation: 'automation-key-0123456789',
  scoped: 'scoped-key-0123456789abcd',
  sparing: 'sparing-key-0123456789ab',
  pager: 'pager-key-0123456789abcde',
  operator: 'operator-key-0123456789ab',
  stranger: 'stranger-key-0123456789ab',
  rotating: 'rotating-key-0123456789ab',
  teamAdmin: 'team-admin-key-0123456789',
  starter: 'starter-key-0123456789abcd',
  writer: 'writer-key-0123456789abcde',
  waiter: 'waiter-key-0123456789abcde',
  tokenless: 'tokenless-key-0123456789ab',
};
const policy = [
  { callers: [keyFingerprintOf(keys.bot)], allow: ['read'], rate: { readsPerMinute: 120 } },
  { callers: [keyFingerprintOf(keys.bot)], allow: ['ContainerGroups_CreateOrUpdate'], scopes: [`/subscriptions/${subscription}/resourceGroups/rg-bot`] },
  { callers: [keyFingerprintOf(keys.otherBot)], allow: ['read'], rate: { readsPerMinute: 120 } },
  { callers: [keyFingerprintOf(keys.automation)], allow: ['read', 'write'], scopes: [`/subscriptions/${subscription}`] },
  // Everything, but only within one resource group: never the certificate routes, which no scope names.
  { callers: [keyFingerprintOf(keys.scoped)], allow: ['read', 'write', 'secrets'], scopes: [`/subscriptions/${subscription}/resourceGroups/rg-auto`] },
  // Two reads a minute, whatever the operation's HTTP method.
  { callers: [keyFingerprintOf(keys.sparing)], allow: ['read'], rate: { readsPerMinute: 2 } },
  { callers: [keyFingerprintOf(keys.pager)], allow: ['read'], rate: { readsPerMinute: 2 } },
  { callers: [keyFingerprintOf(keys.rotating)], allow: ['read', 'write'], rate: { readsPerMinute: 2 } },
  { callers: ['role:Gateway.Operator'], allow: ['read', 'write', 'secrets', 'admin'] },
  // A key that may only start container groups: following its own starts comes with them.
  { callers: [keyFingerprintOf(keys.starter)], allow: ['ContainerGroups_CreateOrUpdate'] },
  // A team's administrator: admin, but only over its own resource group's orchestrations.
  { callers: [keyFingerprintOf(keys.teamAdmin)], allow: ['read', 'write', 'admin'], scopes: [`/subscriptions/${subscription}/resourceGroups/rg-team`] },
  // Shares drawn only by what reaches the upstream.
  { callers: [keyFingerprintOf(keys.writer), keyFingerprintOf(keys.waiter)], allow: ['read', 'write'], rate: { writesPerMinute: 2 } },
  { callers: [keyFingerprintOf(keys.tokenless)], allow: ['read'], rate: { readsPerMinute: 1 } },
];
const operatorPrincipal = {
  'x-ms-client-principal-id': '7d1a2b3c-1234-4abc-9def-0123456789ab',
  'x-ms-client-principal-name': 'operator@contoso.com',
  'x-ms-client-principal': Buffer.from(JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'roles', val: 'Gateway.Operator' }], role_typ: 'roles' })).toString(
    'base64',
  ),
};

const usages = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const groupPath = (resourceGroup: string, name: string) =>
  `subscriptions/${subscription}/resourceGroups/${resourceGroup}/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
const migrate = `subscriptions/${subscription}/resourceGroups/rg-bot/providers/Vendor.ApiManagement/service/apim1/migrateToStv2?api-version=2024-05-01`;
const download = 'environmentinfo/v1/rsatdownload/project/7/environment/6f1a2b3c-1234-4abc-9def-0123456789ab';

let gateway: GatewayFixture;
let withoutPlatformAuth: AppProcess;
/** The same app in passthrough mode, holding one wait per caller. */
let passthrough: AppProcess;
beforeAll(async () => {
  gateway = await startGateway({
    LOCAL_HOST_KEYS: JSON.stringify({ ...keys, master: 'master-key-0123456789abcdef' }),
    ACCESS_POLICY: JSON.stringify(policy),
    WEBSITE_AUTH_ENABLED: 'true',
  });
  [withoutPlatformAuth, passthrough] = await Promise.all([
    startApp({ ...gateway.env, WEBSITE_AUTH_ENABLED: 'false' }),
    startApp({ ...gateway.env, UPSTREAM_AUTH: 'passthrough', UPSTREAM_STATIC_TOKEN: '', GATEWAY_WAIT_MAX_PER_CALLER: '1' }),
  ]);
  gateway.others.push(withoutPlatformAuth, passthrough);
});
afterAll(async () => {
  await withoutPlatformAuth.stop();
  await passthrough.stop();
  await gateway.stop();
});

async function call(key: string | string[], method: string, path: string, options: { body?: string; headers?: Record<string, string>; baseUrl?: string } = {}) {
  const response = await request(`${options.baseUrl ?? gateway.app.url}/api/${path}`, {
    method: method as 'GET',
    body: options.body,
    headers: { 'x-functions-key': key, ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}
const errorCodeOf = (answer: { json?: Record<string, unknown> }) => (answer.json?.error as { code?: string } | undefined)?.code;

describe('a chat-ops bot limited to reading and starting container groups in one resource group', () => {
  it('reads, and starts in its resource group', async () => {
    expect((await call(keys.bot, 'GET', usages)).status).toBe(200);
    expect((await call(keys.bot, 'PUT', groupPath('rg-bot', 'bot-group'), { body: groupBody })).status).toBe(201);
  });

  it.each<[string, string, string, string | undefined, string]>([
    ['starting outside its resource group', 'PUT', groupPath('rg-other', 'elsewhere'), groupBody, 'ScopeNotAllowed'],
    ['migrating a gateway service', 'POST', migrate, '{"mode":"NewIP"}', 'OperationNotAllowed'],
    ['downloading a certificate and its secret', 'GET', download, undefined, 'OperationNotAllowed'],
    ['terminating an orchestration', 'POST', 'orchestrations/6f1a2b3c-1234-4abc-9def-0123456789ab/terminate', undefined, 'OperationNotAllowed'],
    ['purging orchestrations', 'DELETE', 'orchestrations?runtimeStatus=Completed', undefined, 'OperationNotAllowed'],
  ])('is refused %s, before anything is sent upstream', async (_title, method, path, body, code) => {
    gateway.emulator.reset();
    const answer = await call(keys.bot, method, path, { body });
    expect(answer.status).toBe(403);
    expect(errorCodeOf(answer)).toBe(code);
    expect(gateway.emulator.upstreamRequests()).toEqual([]);
  });

  it('leaves the caller and the decision in the call log', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const records = gateway.app.callRecords().filter((record) => record.caller === keyFingerprintOf(keys.bot));
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ operation: 'Location_ListUsage', decision: 'allowed', status: 200 }),
        expect.objectContaining({ operation: 'ApiManagementService_MigrateToStv2', decision: 'OperationNotAllowed', status: 403 }),
        expect.objectContaining({ operation: 'ContainerGroups_CreateOrUpdate', decision: 'ScopeNotAllowed', status: 403 }),
      ]),
    );
  });
});

describe('orchestrations belong to their starters', () => {
  it('shows a caller its own only; an operator with admin sees and ends any', async () => {
    const automationStart = await call(keys.automation, 'PUT', groupPath('rg-auto', 'auto-group'), { body: groupBody });
    expect(automationStart.status).toBe(201);
    const id = automationStart.headers['x-orchestration-id'] as string;
    const botStart = await call(keys.bot, 'PUT', groupPath('rg-bot', 'bot-owned'), { body: groupBody });
    const botId = botStart.headers['x-orchestration-id'] as string;

    // Another caller's orchestration does not exist for it: 404, as for an unknown id.
    expect((await call(keys.bot, 'GET', `orchestrations/${id}`)).status).toBe(404);
    expect((await call(keys.bot, 'GET', `operations/${id}`)).status).toBe(404);
    expect((await call(keys.automation, 'POST', `orchestrations/${botId}/terminate`)).status).toBe(404);
    expect((await call(keys.automation, 'GET', `orchestrations/${id}`)).json).toMatchObject({ id, startedBy: keyFingerprintOf(keys.automation) });

    const listedBy = async (key: string, headers: Record<string, string> = {}) =>
      (((await call(key, 'GET', 'orchestrations?top=1000', { headers })).json!.value as { id: string }[]) ?? []).map((entry) => entry.id);
    expect(await listedBy(keys.automation)).toContain(id);
    expect(await listedBy(keys.automation)).not.toContain(botId);
    expect(await listedBy(keys.bot)).not.toContain(id);
    const operatorSees = await listedBy(keys.stranger, operatorPrincipal);
    expect(operatorSees).toEqual(expect.arrayContaining([id, botId]));
    expect((await call(keys.stranger, 'POST', `orchestrations/${botId}/terminate`, { headers: operatorPrincipal })).json).toMatchObject({
      runtimeStatus: 'Terminated',
    });
  });

  it("leaves another caller's orchestrations to it: purges, one or by filter, do not reach them", async () => {
    const started = await call(keys.automation, 'PUT', groupPath('rg-auto', 'kept'), { body: groupBody });
    const id = started.headers['x-orchestration-id'] as string;
    expect((await call(keys.stranger, 'GET', `orchestrations/${id}`, { headers: operatorPrincipal })).json).toMatchObject({ id });
    await call(keys.automation, 'POST', `orchestrations/${id}/terminate`);
    expect((await call(keys.scoped, 'DELETE', `orchestrations/${id}`)).status).toBe(404);
    expect((await call(keys.scoped, 'DELETE', 'orchestrations?runtimeStatus=Terminated')).json).toEqual({ instancesDeleted: 0 });
    expect((await call(keys.automation, 'GET', `orchestrations/${id}`)).status).toBe(200);
  });

  it("bounds an admin rule limited to scopes by them: another team's orchestration is not there for it", async () => {
    const start = async (resourceGroup: string, name: string) =>
      (await call(keys.automation, 'PUT', groupPath(resourceGroup, name), { body: groupBody })).headers['x-orchestration-id'] as string;
    const inTeam = await start('rg-team', 'team-group');
    const elsewhere = await start('rg-auto', 'another-team-group');

    expect((await call(keys.teamAdmin, 'GET', `orchestrations/${inTeam}`)).json).toMatchObject({ id: inTeam });
    expect((await call(keys.teamAdmin, 'GET', `orchestrations/${elsewhere}`)).status).toBe(404);
    expect((await call(keys.teamAdmin, 'GET', `operations/${elsewhere}`)).status).toBe(404);
    const listed = ((await call(keys.teamAdmin, 'GET', 'orchestrations?top=1000')).json!.value as { id: string }[]).map((entry) => entry.id);
    expect(listed).toContain(inTeam);
    expect(listed).not.toContain(elsewhere);
    expect((await call(keys.teamAdmin, 'POST', `orchestrations/${elsewhere}/terminate`)).status).toBe(404);
    expect((await call(keys.teamAdmin, 'POST', `orchestrations/${inTeam}/terminate`)).json).toMatchObject({ runtimeStatus: 'Terminated' });

    await call(keys.automation, 'POST', `orchestrations/${elsewhere}/terminate`);
    expect((await call(keys.teamAdmin, 'DELETE', `orchestrations/${elsewhere}`)).status).toBe(404);
    await call(keys.teamAdmin, 'DELETE', 'orchestrations?runtimeStatus=Terminated');
    expect((await call(keys.automation, 'GET', `orchestrations/${elsewhere}`)).status).toBe(200);
    expect((await call(keys.automation, 'GET', `orchestrations/${inTeam}`)).status).toBe(404);
  });

  it("takes another caller's identical start for a start of its own", async () => {
    gateway.emulator.reset();
    const [bot, automation] = await Promise.all(
      [keys.bot, keys.automation].map((key) => call(key, 'PUT', groupPath('rg-bot', 'same-request'), { body: groupBody })),
    );
    expect(bot!.headers['x-orchestration-id']).not.toBe(automation!.headers['x-orchestration-id']);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(2);
  });
});

describe('a caller allowed only to start', () => {
  it('follows its own start: the Location it was answered, and the status with gateway-wait', async () => {
    const started = await call(keys.starter, 'PUT', groupPath('rg-bot', 'started-only'), { body: groupBody });
    expect(started.status).toBe(201);
    const id = started.headers['x-orchestration-id'] as string;
    const location = started.headers.location as string;
    expect(location).toBe(`${gateway.app.url}/api/operations/${id}`);
    const followed = await call(keys.starter, 'GET', location.slice(`${gateway.app.url}/api/`.length));
    expect([200, 202]).toContain(followed.status);
    expect((await call(keys.starter, 'GET', `orchestrations/${id}?gateway-wait=30`)).json).toMatchObject({ id, runtimeStatus: 'Completed' });
    expect((await call(keys.starter, 'GET', `operations/${id}`)).status).toBe(200);
  });

  it("gets nothing else from it: another caller's orchestration, lists, terminate and purge stay refused", async () => {
    const others = (await call(keys.automation, 'PUT', groupPath('rg-auto', 'not-the-starters'), { body: groupBody })).headers['x-orchestration-id'] as string;
    const own = (await call(keys.starter, 'PUT', groupPath('rg-bot', 'started-only-too'), { body: groupBody })).headers['x-orchestration-id'] as string;
    for (const [method, path] of [
      ['GET', `orchestrations/${others}`],
      ['GET', `operations/${others}`],
      ['GET', 'operations/6f1a2b3c-1234-4abc-9def-0123456789ab'],
      ['GET', 'orchestrations'],
      ['POST', `orchestrations/${own}/terminate`],
      ['DELETE', `orchestrations/${own}`],
    ]) {
      const answer = await call(keys.starter, method!, path!);
      expect([path, answer.status, errorCodeOf(answer)]).toEqual([path, 403, 'OperationNotAllowed']);
    }
  });
});

describe('App Service Authentication headers', () => {
  it('grant an app role only with WEBSITE_AUTH_ENABLED=true, where the platform sets them', async () => {
    // The stranger's key has no rule; the operator's principal headers make it an operator...
    expect((await call(keys.stranger, 'GET', usages, { headers: operatorPrincipal })).status).toBe(200);
    // ...but only where the platform vouches for them. Sent to an app without App Service
    // Authentication, they are anyone's to forge, and grant nothing.
    const forged = await call(keys.stranger, 'GET', usages, { headers: operatorPrincipal, baseUrl: withoutPlatformAuth.url });
    expect(forged.status).toBe(403);
    expect(errorCodeOf(forged)).toBe('OperationNotAllowed');
    const botWithForgedRole = await call(keys.bot, 'GET', download, { headers: operatorPrincipal, baseUrl: withoutPlatformAuth.url });
    expect(botWithForgedRole.status).toBe(403);
  });
});

describe("a caller's share of the upstream", () => {
  it('answers 429 CallerRateLimited with Retry-After past the share, sends nothing for it, and recovers', async () => {
    gateway.emulator.reset();
    const answers = await Promise.all(Array.from({ length: 130 }, () => call(keys.bot, 'GET', usages)));
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((answer) => errorCodeOf(answer) === 'CallerRateLimited' && Number(answer.headers['retry-after']) >= 1)).toBe(true);
    // One upstream call per allowed answer, counted by correlation id: under 130 calls at once a
    // connection can fail and its GET be retried (same id), which is not a refused call sent.
    // Only the usages read: the poller's reads of orchestrations still running are not the bot's.
    const sentCalls = new Set(
      gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/usages' }).map((sent) => sent.headers['x-ms-client-request-id']),
    );
    expect(sentCalls.size).toBe(answers.length - refused.length);
    // Another caller's share is its own.
    expect((await call(keys.automation, 'GET', usages)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await call(keys.bot, 'GET', usages)).status).toBe(200);
  });

  it('gives each limited key a share of its own', async () => {
    gateway.emulator.reset();
    const drained = await Promise.all(Array.from({ length: 125 }, () => call(keys.otherBot, 'GET', usages)));
    expect(drained.some((answer) => answer.status === 429)).toBe(true);
    // The bot's share is untouched by the other bot's (both allow 120 reads a minute).
    expect((await call(keys.bot, 'GET', usages)).status).toBe(200);
  });

  it("charges a key's share to the key whoever signs in with it, and a read that is a POST as a read", async () => {
    const events = 'providers/Vendor.ResourceHealth/events/TRK-1/fetchEventDetails?api-version=2025-05-01';
    const asPrincipal = (id: string) => ({
      ...operatorPrincipal,
      'x-ms-client-principal-id': id,
      'x-ms-client-principal': Buffer.from('{"claims":[]}').toString('base64'),
    });
    expect((await call(keys.sparing, 'POST', events, { headers: asPrincipal('11111111-aaaa-4aaa-8aaa-000000000001') })).status).toBe(200);
    expect((await call(keys.sparing, 'GET', usages, { headers: asPrincipal('11111111-aaaa-4aaa-8aaa-000000000002') })).status).toBe(200);
    const third = await call(keys.sparing, 'POST', events, { headers: asPrincipal('11111111-aaaa-4aaa-8aaa-000000000003') });
    expect(third.status).toBe(429);
    expect(errorCodeOf(third)).toBe('CallerRateLimited');
  });

  it('ends a merge of pages where the share ends, answering the merged part with its nextLink', async () => {
    gateway.emulator.reset();
    // Two reads a minute: the first page and one more; the third page is left to the nextLink.
    const merged = await call(keys.pager, 'GET', `${usages}&gateway-pages=all`);
    expect(merged.status).toBe(200);
    expect(merged.json).toMatchObject({ value: expect.any(Array), nextLink: expect.stringContaining('/api/subscriptions/') });
    expect(gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/usages' })).toHaveLength(2);
  });

  it('draws nothing for a start that joins a running one (an SDK retrying its PUT): the next, different start goes', async () => {
    gateway.emulator.reset();
    const first = await call(keys.writer, 'PUT', groupPath('rg-auto', 'retried-put'), { body: groupBody });
    const retried = await call(keys.writer, 'PUT', groupPath('rg-auto', 'retried-put'), { body: groupBody });
    expect(retried.headers['x-orchestration-duplicate']).toBe('true');
    expect(retried.headers['x-orchestration-id']).toBe(first.headers['x-orchestration-id']);
    expect((await call(keys.writer, 'PUT', groupPath('rg-auto', 'next-put'), { body: groupBody })).status).toBe(201);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(2);
  });

  it('draws nothing for a call refused for its missing bearer token (passthrough mode)', async () => {
    const usagesOn = (headers: Record<string, string> = {}) => call(keys.tokenless, 'GET', usages, { baseUrl: passthrough.url, headers });
    for (let attempt = 0; attempt < 3; attempt += 1) expect(errorCodeOf(await usagesOn())).toBe('MissingBearerToken');
    expect((await usagesOn({ authorization: 'Bearer emulator-token' })).status).toBe(200);
    expect(errorCodeOf(await usagesOn({ authorization: 'Bearer emulator-token' }))).toBe('CallerRateLimited');
  });

  it('draws nothing for a start refused TooManyWaits: the next start goes', async () => {
    const bearer = { authorization: 'Bearer emulator-token' };
    const started = await call(keys.waiter, 'PUT', groupPath('rg-auto', 'waited-on'), { body: groupBody, headers: bearer, baseUrl: passthrough.url });
    expect(started.status).toBe(201);
    // The caller's one wait, held (without a token, so nothing polls meanwhile).
    const hangUp = new AbortController();
    const held = request(`${passthrough.url}/api/orchestrations/${started.headers['x-orchestration-id'] as string}?gateway-wait=30`, {
      headers: { 'x-functions-key': keys.waiter },
      signal: hangUp.signal,
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    try {
      const refused = await call(keys.waiter, 'PUT', `${groupPath('rg-auto', 'wait-refused')}&gateway-wait=10`, {
        body: groupBody,
        headers: bearer,
        baseUrl: passthrough.url,
      });
      expect(errorCodeOf(refused)).toBe('TooManyWaits');
      expect(
        (await call(keys.waiter, 'PUT', groupPath('rg-auto', 'after-refused-wait'), { body: groupBody, headers: bearer, baseUrl: passthrough.url })).status,
      ).toBe(201);
    } finally {
      hangUp.abort();
      await held;
    }
  });

  it("shows how much of the management service's budget is left, in the call log and in health", async () => {
    await call(keys.automation, 'GET', usages);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [record] = gateway.app
      .callRecords()
      .filter((entry) => entry.operation === 'Location_ListUsage')
      .slice(-1);
    expect(record).toMatchObject({ upstreamRemaining: { subscriptionReads: expect.any(Number) } });
    const health = (await (await request(`${gateway.app.url}/api/health`)).body.json()) as Record<string, unknown>;
    expect(health).toMatchObject({ upstreamBudget: { subscriptionReads: { remaining: expect.any(Number), seenAt: expect.any(String) } } });
  });
});

describe('a rule limited to scopes', () => {
  it('grants nothing on the certificate routes, which no scope names', async () => {
    expect(errorCodeOf(await call(keys.scoped, 'GET', download))).toBe('OperationNotAllowed');
    expect(errorCodeOf(await call(keys.scoped, 'POST', 'certificates/refresh'))).toBe('OperationNotAllowed');
    expect((await call(keys.scoped, 'PUT', groupPath('rg-auto', 'scoped-start'), { body: groupBody })).status).toBe(201);
  });

  it("holds the resources a body names to the same scopes: another group's identity or subnet is refused before anything is sent", async () => {
    const inGroup = (group: string, rest: string) => `/subscriptions/${subscription}/resourceGroups/${group}/providers/${rest}`;
    const withReferences = (group: string) =>
      JSON.stringify({
        location: 'westus',
        identity: { type: 'UserAssigned', userAssignedIdentities: { [inGroup(group, 'Microsoft.ManagedIdentity/userAssignedIdentities/admin')]: {} } },
        properties: {
          containers: [{ name: 'web', properties: { image: 'nginx' } }],
          subnetIds: [{ id: inGroup(group, 'Microsoft.Network/virtualNetworks/vnet/subnets/default') }],
        },
      });
    const sentBefore = gateway.emulator.upstreamRequests({ method: 'PUT' }).length;
    const refused = await call(keys.scoped, 'PUT', groupPath('rg-auto', 'borrowed-identity'), { body: withReferences('rg-prod') });
    expect(refused.status).toBe(403);
    expect(refused.json?.error).toMatchObject({ code: 'ScopeNotAllowed', target: expect.stringContaining('identity.userAssignedIdentities') });
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' }).length).toBe(sentBefore);
    // Its own group's identity and subnet are its own to name.
    expect((await call(keys.scoped, 'PUT', groupPath('rg-auto', 'own-identity'), { body: withReferences('rg-auto') })).status).toBe(201);
    // A caller scoped to the subscription names any group in it.
    expect((await call(keys.automation, 'PUT', groupPath('rg-auto', 'automation-identity'), { body: withReferences('rg-prod') })).status).toBe(201);
  });
});

describe('a resource a body names, in another spelling', () => {
  const elsewhere = `subscriptions/${subscription}/resourceGroups/rg-prod/providers/Microsoft.Network/virtualNetworks/vnet/subnets/default`;
  const bodyNaming = (reference: string, as: 'value' | 'key') =>
    JSON.stringify({
      location: 'westus',
      ...(as === 'key' ? { identity: { type: 'UserAssigned', userAssignedIdentities: { [reference]: {} } } } : {}),
      properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }], ...(as === 'value' ? { subnetIds: [{ id: reference }] } : {}) },
    });

  // The spellings the review found; every other is in test/unit/http/bodyReferences.test.ts.
  it.each<[string, string, 'value' | 'key', number, string]>([
    ['two leading slashes', `//${elsewhere}`, 'value', 403, 'ScopeNotAllowed'],
    ['no leading slash', elsewhere, 'key', 403, 'ScopeNotAllowed'],
    ['a leading space', ` /${elsewhere}`, 'value', 403, 'ScopeNotAllowed'],
    ['a full management URL', `https://management.azure.com/${elsewhere}?api-version=2024-05-01`, 'value', 403, 'ScopeNotAllowed'],
    [
      'a `..` segment',
      `/subscriptions/${subscription}/resourceGroups/rg-auto/../rg-prod/providers/Microsoft.Network/virtualNetworks/vnet/subnets/default`,
      'value',
      400,
      'InvalidRequestBody',
    ],
    ['a `.` segment', `/subscriptions/${subscription}/resourceGroups/rg-auto/./x`, 'key', 400, 'InvalidRequestBody'],
  ])("%s: held to the caller's scopes, refused before anything is sent", async (_title, reference, as, status, code) => {
    const sentBefore = gateway.emulator.upstreamRequests({ method: 'PUT' }).length;
    const refused = await call(keys.scoped, 'PUT', groupPath('rg-auto', 'other-spelling'), { body: bodyNaming(reference, as) });
    expect([refused.status, errorCodeOf(refused)]).toEqual([status, code]);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' }).length).toBe(sentBefore);
  });

  it('lets the caller name its own group in any of them', async () => {
    const own = elsewhere.replace('rg-prod', 'rg-auto');
    for (const [index, reference] of [`//${own}`, own, ` /${own}`, `https://management.azure.com/${own}`].entries()) {
      expect((await call(keys.scoped, 'PUT', groupPath('rg-auto', `own-spelling-${index}`), { body: bodyNaming(reference, 'value') })).status).toBe(201);
    }
  });
});

describe('the local host reads the key as the app does', () => {
  it('takes the first code in any case: a caller cannot name itself with another', async () => {
    const response = await request(`${gateway.app.url}/api/${usages}&Code=chosen-by-caller-001&code=${keys.otherBot}`);
    expect(response.statusCode).toBe(401);
    await response.body.dump();
  });
});

describe('a second x-functions-key line', () => {
  it("makes no new caller: the share, the ownership and the log are the first line's, the key the host authenticated", async () => {
    const withSecondLine = (index: number) => [keys.rotating, `chosen-by-caller-${index}`];
    const started = await call(withSecondLine(0), 'PUT', groupPath('rg-auto', 'rotating-start'), { body: groupBody });
    expect(started.status).toBe(201);
    const id = started.headers['x-orchestration-id'] as string;
    // Owned by the key alone: read with it, and not by anyone naming the same second line.
    expect((await call(keys.rotating, 'GET', `orchestrations/${id}`)).json).toMatchObject({ id, startedBy: keyFingerprintOf(keys.rotating) });
    // Two reads a minute, however the second line (or a second ?code=) changes.
    const answers = [];
    for (const index of [1, 2]) answers.push(await call(withSecondLine(index), 'GET', usages));
    answers.push(await call([], 'GET', `${usages}&code=${keys.rotating}&code=chosen-by-caller-3`));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const callers = new Set(
      gateway.app
        .callRecords()
        .filter((record) => record.operation === 'Location_ListUsage' && record.status !== 403)
        .slice(-3)
        .map((record) => record.caller),
    );
    expect([...callers]).toEqual([keyFingerprintOf(keys.rotating)]);
  });

  it('is refused after a key that is not one, as the host authenticates the first line only', async () => {
    expect((await call(['not-a-key-0123456789abcd', keys.rotating], 'GET', usages)).status).toBe(401);
  });
});

describe('start-up', () => {
  it('stops on a policy naming what no rule can allow, naming ACCESS_POLICY and the rule', async () => {
    const { code, output } = await runAppExpectingFailure({
      ...gateway.env,
      ACCESS_POLICY: JSON.stringify([
        { callers: ['*'], allow: ['read'] },
        { callers: ['*'], allow: ['ContainerGroups_Delete'] },
      ]),
    });
    expect(code).toBe(1);
    expect(output).toMatch(/ACCESS_POLICY \[1\]\.allow\[0\]/);
  });

  it('says in one line that every key may do everything when no policy is set', async () => {
    const { ACCESS_POLICY: _policy, ...env } = gateway.env;
    const open = await startApp(env);
    await open.stop();
    expect(open.lines.filter((line) => line.includes('ACCESS_POLICY is not set'))).toHaveLength(1);
  });
});
