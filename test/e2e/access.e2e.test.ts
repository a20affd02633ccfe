/**
 * Keeping out who does not belong: function keys as the real host checks them, the scope
 * allow-list, the caller's token in passthrough mode, and a wrong setting stopping start-up.
 */
import { request } from 'undici';
import { runAppExpectingFailure } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

const allowedSubscription = '11111111-1111-1111-1111-111111111111';
const otherSubscription = '22222222-2222-2222-2222-222222222222';
const usagesOf = (subscriptionId: string) =>
  `subscriptions/${subscriptionId}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const botKey = 'bot-key-0123456789abcdef';

describe('function keys and the scope allow-list', () => {
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway({
      LOCAL_HOST_KEYS: JSON.stringify({ chatops: botKey, master: 'master-key-0123456789abcdef' }),
      ALLOWED_SCOPES: JSON.stringify([`/subscriptions/${allowedSubscription}`]),
    });
  });
  afterAll(async () => {
    await gateway.stop();
  });
  beforeEach(() => gateway.emulator.reset());

  it('refuses a call without a key, or with a wrong one, saying which', async () => {
    for (const [headers, message] of [
      [{}, 'This function needs a key: send it in x-functions-key or ?code=.'],
      [{ 'x-functions-key': 'wrong-key-0123456789abcdef' }, 'The function key given was not accepted: send a key of this app in x-functions-key or ?code=.'],
    ] as const) {
      const response = await request(gateway.api(usagesOf(allowedSubscription)), { headers });
      expect(response.statusCode).toBe(401);
      expect(await response.body.json()).toEqual({ error: { code: 'Unauthorized', message } });
    }
    expect(gateway.emulator.upstreamRequests()).toHaveLength(0);
  });

  it('accepts a key in the header or in ?code=, and logs a fingerprint of it, never the key', async () => {
    const byHeader = await request(gateway.api(usagesOf(allowedSubscription)), { headers: { 'x-functions-key': botKey } });
    expect(byHeader.statusCode).toBe(200);
    await byHeader.body.dump();
    const byQuery = await request(`${gateway.api(usagesOf(allowedSubscription))}&code=${botKey}`);
    expect(byQuery.statusCode).toBe(200);
    await byQuery.body.dump();
    // The key is the host's, not the upstream's: it is never forwarded.
    expect(gateway.emulator.upstreamRequests().map((seen) => seen.query.code)).toEqual([undefined, undefined]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const callers = gateway.app.callRecords().map((record) => record.caller);
    expect(callers.filter((caller) => caller === callers[0])).toHaveLength(2);
    expect(callers[0]).toMatch(/^key:[0-9a-f]{12}$/);
    expect(gateway.app.lines.join('\n')).not.toContain(botKey);
  });

  it('leaves health open', async () => {
    const response = await request(gateway.api('health'));
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject({ status: 'Healthy', dependencies: { storage: { ok: true } } });
  });

  it('answers 403 outside the allowed scopes, sends nothing upstream, and logs the target refused', async () => {
    const response = await request(gateway.api(usagesOf(otherSubscription)), { headers: { 'x-functions-key': botKey } });
    expect(response.statusCode).toBe(403);
    expect(await response.body.json()).toMatchObject({ error: { code: 'ScopeNotAllowed', target: `/${usagesOf(otherSubscription).split('?')[0]}` } });
    expect(gateway.emulator.upstreamRequests()).toHaveLength(0);
    // The call log names the path refused, not "(invalid)": the path was valid.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(
      gateway.app
        .callRecords()
        .filter((record) => record.decision === 'ScopeNotAllowed')
        .at(-1),
    ).toMatchObject({ status: 403, target: `/${usagesOf(otherSubscription).split('?')[0]}` });
  });
});

describe('passthrough of the caller’s token', () => {
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway({ UPSTREAM_AUTH: 'passthrough', UPSTREAM_STATIC_TOKEN: '' }, { token: 'CANARY-SECRET-callers-token' });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it('forwards the caller’s bearer token, and asks for one when it is missing', async () => {
    const withToken = await request(gateway.api(usagesOf(allowedSubscription)), { headers: { authorization: 'Bearer CANARY-SECRET-callers-token' } });
    expect(withToken.statusCode).toBe(200);
    await withToken.body.dump();
    const without = await request(gateway.api(usagesOf(allowedSubscription)));
    expect(without.statusCode).toBe(401);
    expect(await without.body.json()).toMatchObject({ error: { code: 'MissingBearerToken' } });
  });

  it('treats the same request from another caller as a new start, never handing over the first one’s', async () => {
    gateway.emulator.reset();
    const start = (token: string) =>
      request(
        gateway.api(
          `subscriptions/${allowedSubscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/shared-name?api-version=2025-09-01`,
        ),
        {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } }),
        },
      );
    const first = await start('CANARY-SECRET-callers-token');
    await first.body.dump();
    const intruder = await start('CANARY-SECRET-someone-else');
    await intruder.body.dump();
    expect(first.statusCode).toBe(201);
    // The upstream judged the second caller's own token (and refused it), instead of the app
    // handing it the first caller's orchestration.
    expect(intruder.statusCode).toBe(401);
    expect(intruder.headers['x-orchestration-id']).not.toBe(first.headers['x-orchestration-id']);
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(2);
  });

  it('advances an orchestration when its caller reads it with the token, the timer holding none', async () => {
    const authorization = 'Bearer CANARY-SECRET-callers-token';
    const started = await request(
      gateway.api(
        `subscriptions/${allowedSubscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/passthrough?api-version=2025-09-01`,
      ),
      {
        method: 'PUT',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } }),
      },
    );
    expect(started.statusCode).toBe(201);
    await started.body.dump();
    const location = started.headers.location as string;
    // Another caller's reads never drive this caller's operation with their own token.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const readsBefore = gateway.emulator.upstreamRequests({ pathIncludes: '/operationResults/' }).length;
    const stranger = await request(location, { headers: { authorization: 'Bearer CANARY-SECRET-stranger' } });
    expect(stranger.statusCode).toBe(202);
    await stranger.body.dump();
    expect(gateway.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(readsBefore);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const answer = await request(location, { headers: { authorization } });
      if (answer.statusCode !== 202) {
        expect(answer.statusCode).toBe(200);
        expect(await answer.body.json()).toMatchObject({ properties: { provisioningState: 'Succeeded' } });
        return;
      }
      await answer.body.dump();
      await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
    }
    throw new Error('The orchestration never completed');
  });
});

/** A JWT-shaped token (unsigned: the app reads claims as labels, and the emulator compares whole tokens). */
const jwt = (claims: Record<string, string>) =>
  ['{"alg":"none","typ":"JWT"}', JSON.stringify(claims)].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.c2lnbmF0dXJl';

describe('passthrough orchestrations over an operation longer than a token lives', () => {
  const principal = { tid: '33333333-3333-3333-3333-333333333333', oid: '44444444-4444-4444-4444-444444444444' };
  const started = jwt({ ...principal, nonce: 'issued-at-start' });
  const refreshed = jwt({ ...principal, nonce: 'issued-an-hour-later' });
  const expired = jwt({ ...principal, nonce: 'expired-and-refused' });
  const otherPrincipal = jwt({ tid: principal.tid, oid: '55555555-5555-5555-5555-555555555555' });
  let gateway: GatewayFixture;
  beforeAll(async () => {
    gateway = await startGateway(
      {
        UPSTREAM_AUTH: 'passthrough',
        UPSTREAM_STATIC_TOKEN: '',
        ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
        LRO_DEFAULT_POLL_SECONDS: '1',
        LRO_DEADLINE_MINUTES: JSON.stringify({ ApiManagementService_MigrateToStv2: 0.05 }),
        ORCHESTRATION_RETENTION_HOURS: '0.001',
      },
      { token: started, otherTokens: [refreshed, otherPrincipal], lroSteps: 2, retryAfterSeconds: 1 },
    );
  });
  afterAll(async () => {
    await gateway.stop();
  });

  const operationReads = () => gateway.emulator.upstreamRequests({ pathIncludes: '/operationResults/' }).length;
  async function startGroup(name: string, token: string) {
    const response = await request(
      gateway.api(`subscriptions/${allowedSubscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`),
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } }),
      },
    );
    await response.body.dump();
    expect(response.statusCode).toBe(201);
    return { location: response.headers.location as string, id: response.headers['x-orchestration-id'] as string };
  }
  const read = async (url: string, token: string) => {
    const response = await request(url, { headers: { authorization: `Bearer ${token}` } });
    return {
      status: response.statusCode,
      retryAfter: Number(response.headers['retry-after'] ?? 1),
      json: (await response.body.json().catch(() => undefined)) as Record<string, unknown> | undefined,
    };
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('the same principal with a refreshed token carries the operation on; a refused read never fails it', async () => {
    const { location, id } = await startGroup('token-refresh', started);
    await pause(1100);
    // Another principal's read, though the upstream would accept its token, drives nothing.
    const before = operationReads();
    expect((await read(location, otherPrincipal)).status).toBe(202);
    expect(operationReads()).toBe(before);
    // The same principal's token that the upstream refuses: the poll is a failed read, not the operation's end.
    expect((await read(location, expired)).status).toBe(202);
    expect(operationReads()).toBe(before + 1);
    const document = await read(`${gateway.api(`orchestrations/${id}`)}`, expired);
    expect(document.json).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 401 } });
    for (let attempt = 0; attempt < 30; attempt += 1) {
      const answer = await read(location, refreshed);
      if (answer.status !== 202) {
        expect(answer).toMatchObject({ status: 200, json: { properties: { provisioningState: 'Succeeded' } } });
        return;
      }
      await pause(answer.retryAfter * 1000);
    }
    throw new Error('The orchestration never completed with the refreshed token');
  });

  it("answers gateway-wait with the final resource: the waiting caller's token makes the polls the timer cannot", async () => {
    const response = await request(
      gateway.api(
        `subscriptions/${allowedSubscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/waited?api-version=2025-09-01&gateway-wait=20`,
      ),
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${started}`, 'content-type': 'application/json' },
        body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } }),
      },
    );
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject({ name: 'waited', properties: { provisioningState: 'Succeeded' } });
  });

  it('without any reader, the poller still fails an operation past its deadline, then purges it', async () => {
    const response = await request(
      gateway.api(`subscriptions/${allowedSubscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim1/migrateToStv2?api-version=2024-05-01`),
      {
        method: 'POST',
        headers: { authorization: `Bearer ${started}`, 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'NewIP' }),
      },
    );
    await response.body.dump();
    expect(response.statusCode).toBe(202);
    const id = response.headers['x-orchestration-id'] as string;
    // Deadline 3 s; retention 3.6 s: failed by the timer (no token needed), then purged.
    let status: unknown;
    for (let attempt = 0; attempt < 40 && status !== 'Failed'; attempt += 1) {
      await pause(250);
      const document = await request(gateway.api(`orchestrations/${id}`));
      status = ((await document.body.json()) as { runtimeStatus?: string }).runtimeStatus;
    }
    expect(status).toBe('Failed');
    const failed = (await (await request(gateway.api(`orchestrations/${id}`))).body.json()) as Record<string, unknown>;
    expect(failed).toMatchObject({ failure: { code: 'DeadlineExceeded' } });
    let gone = false;
    for (let attempt = 0; attempt < 40 && !gone; attempt += 1) {
      await pause(250);
      const document = await request(gateway.api(`orchestrations/${id}`));
      await document.body.dump();
      gone = document.statusCode === 404;
    }
    expect(gone).toBe(true);
  });
});

describe('start-up settings', () => {
  it('a wrong setting stops start-up with a message naming it', async () => {
    const { code, output } = await runAppExpectingFailure({
      MANAGEMENT_BASE_URL: 'not-a-url',
      LIFECYCLE_BASE_URL: 'http://127.0.0.1:9',
      UPSTREAM_AUTH: 'sometimes',
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/MANAGEMENT_BASE_URL/);
    expect(output).toMatch(/UPSTREAM_AUTH/);
  });
});
