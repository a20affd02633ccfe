/**
 * Chat-ops end to end: a Slack stand-in and a Teams stand-in sign commands exactly as the
 * platforms document (see ../helpers/chatSigning.ts) and take the posts the app makes to a
 * `response_url` and to a Workflows webhook. The app is the real one in process, the emulator
 * its upstream.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { request } from 'undici';
import { startChatPostReceiver, type ChatPostReceiver } from '../helpers/chatPostReceiver';
import { chatIdentities, slackSignedHeaders, teamsActivityOf, teamsAuthorization } from '../helpers/chatSigning';
import { startCountingStorageProxy, type CountingStorageProxy } from '../../tools/harness/countingStorage';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';

const { slackSecret, teamsToken, team, user: operator, tenant, teamsUser } = chatIdentities('T0CHAT');

const workflowSig = randomBytes(12).toString('hex');
const subscription = '11111111-2222-3333-4444-555555555555';
/** A key with `admin`, to read the status documents of the orchestrations chat users start. */
const adminKey = randomBytes(16).toString('hex');

/** The receiving end of both platforms: Slack's response_urls and the Teams workflow. */
let receiver: ChatPostReceiver;
let posts: ChatPostReceiver['posts'];
let standInOrigin = '';
let gateway: InProcessGateway;
/** Storage behind a proxy that counts its requests. */
let storage: CountingStorageProxy;

beforeAll(async () => {
  receiver = await startChatPostReceiver();
  ({ posts, origin: standInOrigin } = receiver);
  const scope = `/subscriptions/${subscription}/resourceGroups/rg-chat`;
  gateway = await startInProcessGateway(
    {
      SLACK_SIGNING_SECRET: slackSecret,
      SLACK_RESPONSE_URL_ORIGINS: JSON.stringify([standInOrigin]),
      TEAMS_WEBHOOK_SECRET: teamsToken,
      TEAMS_WORKFLOW_URL: `${standInOrigin}/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=${workflowSig}`,
      ACCESS_POLICY: JSON.stringify([
        { callers: [`slack:${team}/${operator}`, `teams:${tenant}/${teamsUser}`], allow: ['ApiManagementService_MigrateToStv2', 'read'], scopes: [scope] },
        { callers: [`slack:${team}/UREADER`], allow: ['read'] },
        // Two upstream writes a minute: only what is sent upstream draws on them.
        { callers: [`slack:${team}/URATED`], allow: ['ApiManagementService_MigrateToStv2', 'read'], scopes: [scope], rate: { writesPerMinute: 2 } },
        { callers: [`key:${createHash('sha256').update(adminKey).digest('hex').slice(0, 12)}`], allow: ['read', 'admin'] },
      ]),
    },
    {},
    { storageConnection: storageBehind(startCountingStorageProxy, (started) => (storage = started)) },
  );
});
afterAll(async () => {
  await gateway.stop();
  await receiver.close();
  await storage.close();
});

const migrations = () => gateway.emulator.upstreamRequests({ method: 'POST', pathIncludes: 'migrateToStv2' }).length;

// ---- The Slack stand-in ---------------------------------------------------------------

function slackForm(text: string, user = operator, responseToken = randomUUID()): string {
  return new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: team,
    team_domain: 'contoso',
    channel_id: 'C0OPS',
    user_id: user,
    user_name: 'ops',
    command: '/gateway',
    text,
    response_url: `${standInOrigin}/commands/${team}/${responseToken}`,
    trigger_id: '1.2.3',
  }).toString();
}

function slackHeaders(body: string, options: { secret?: string; timestamp?: number } = {}): Record<string, string> {
  return slackSignedHeaders(options.secret ?? slackSecret, body, options.timestamp);
}

async function sendSlack(body: string, headers = slackHeaders(body)) {
  const response = await request(`${gateway.url}/api/chatops/slack`, { method: 'POST', headers, body });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { text?: string; response_type?: string; blocks?: unknown[]; error?: { code: string } },
  };
}

// ---- The Teams stand-in ---------------------------------------------------------------

function teamsActivity(text: string, user = teamsUser, timestamp = new Date().toISOString()): string {
  return teamsActivityOf(text, tenant, user, timestamp);
}

async function sendTeams(body: string, token = teamsToken) {
  const response = await request(`${gateway.url}/api/chatops/teams`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: teamsAuthorization(token, body) },
    body,
  });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as {
      type?: string;
      text?: string;
      attachments?: { contentType: string; content: { type: string } }[];
      error?: { code: string };
    },
  };
}

/** Runs the poller until `done` holds (the end delivered), or fails after a generous bound. */
async function pollUntil(done: () => boolean): Promise<void> {
  for (let run = 0; run < 120 && !done(); run += 1) {
    await gateway.host.runTimer('orchestrationPoller');
    if (!done()) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(done()).toBe(true);
}

const operationIdIn = (text: string | undefined) => /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/.exec(text ?? '')?.[1];

describe('Slack', () => {
  it('a migration is acknowledged while the upstream is still answering, and its end is posted once to the response_url', async () => {
    gateway.emulator.script({ kind: 'delay', method: 'POST', pathPattern: 'migrateToStv2$', delayMs: 8000 });
    const responseToken = randomUUID();
    const sentAt = Date.now();
    const ack = await sendSlack(slackForm(`migrate ${subscription}/rg-chat/apim-slow`, operator, responseToken));
    const ackMs = Date.now() - sentAt;
    expect(ack.status).toBe(200);
    expect(ack.body.response_type).toBe('ephemeral');
    expect(ack.body.text).toMatch(/^Started operation /);
    const id = operationIdIn(ack.body.text)!;
    expect(id).toBeDefined();
    expect(posts.filter((post) => post.path.includes(responseToken))).toEqual([]);

    console.log(`chat-ops: Slack acknowledgement of a migration with an 8 s upstream start took ${ackMs} ms`);

    await pollUntil(() => posts.some((post) => post.path.includes(responseToken)));
    for (let run = 0; run < 3; run += 1) await gateway.host.runTimer('orchestrationPoller');
    const ends = posts.filter((post) => post.path.includes(responseToken));
    expect(ends).toHaveLength(1);
    expect(ends[0]!.body).toMatchObject({ response_type: 'ephemeral', replace_original: false, text: expect.stringContaining(`Operation ${id} completed`) });
    expect(JSON.stringify(ends[0]!.body.blocks)).toContain('ApiManagementService_MigrateToStv2');
    expect(migrations()).toBe(1);
    // The status document shows where the end went by origin only: the response_url's token stays out.
    const status = await request(`${gateway.url}/api/orchestrations/${id}`, { headers: { 'x-functions-key': adminKey } });
    const document = await status.body.text();
    expect(status.statusCode).toBe(200);
    expect(JSON.parse(document)).toMatchObject({
      startedBy: `slack:${team}/${operator}`,
      notifications: [{ targetOrigin: standInOrigin, state: 'delivered', attempts: 1 }],
    });
    expect(document).not.toContain(responseToken);
  });

  it('a double-fired command starts one operation', async () => {
    gateway.emulator.script({ kind: 'delay', method: 'POST', pathPattern: 'migrateToStv2$', delayMs: 3000 });
    const before = migrations();
    const text = `migrate ${subscription}/rg-chat/apim-twice`;
    const answers = await Promise.all([sendSlack(slackForm(text)), sendSlack(slackForm(text))]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const texts = answers.map((answer) => answer.body.text ?? '').sort();
    expect(texts[0]).toMatch(/^Started operation /);
    expect(texts[1]).toMatch(/^The operation is still being started: a repeated command joins the first/);
    // Let the start finish, then count what reached the upstream.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(migrations() - before).toBe(1);
  });

  it("a repeated migration that joins the first draws nothing on the user's share: the next, different one still starts", async () => {
    const before = migrations();
    const first = await sendSlack(slackForm(`migrate ${subscription}/rg-chat/apim-share`, 'URATED'));
    expect(first.body.text).toMatch(/^Started operation /);
    // Let the first start's upstream call finish, so the repeat finds it running.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const repeat = await sendSlack(slackForm(`migrate ${subscription}/rg-chat/apim-share`, 'URATED'));
    expect(repeat.body.text).toMatch(/already running for you: it was not started again/);
    const next = await sendSlack(slackForm(`migrate ${subscription}/rg-chat/apim-share-2`, 'URATED'));
    expect(next.body.text).toMatch(/^Started operation /);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(migrations() - before).toBe(2);
  });

  it("status, wait and list answer from the app; usage and cert within the reader's rights; terminate needs write", async () => {
    const started = await sendSlack(slackForm(`migrate ${subscription}/rg-chat/apim-read`));
    const id = operationIdIn(started.body.text)!;
    expect((await sendSlack(slackForm(`status ${id}`))).body.text).toContain(`Operation ${id}`);
    await pollUntil(() => posts.some((post) => JSON.stringify(post.body).includes(`Operation ${id} completed`)));
    storage.reset();
    expect((await sendSlack(slackForm(`wait ${id}`))).body.text).toMatch(/Status: Completed/);
    // Let in from the status's metadata, as the wait route is: the document is read once, to answer.
    expect(storage.requests.filter((line) => line.startsWith('GET ') && line.includes(id))).toHaveLength(1);
    expect((await sendSlack(slackForm('list completed since 1h'))).body.text).toContain(id);
    // Another user's operation is one that does not exist.
    expect((await sendSlack(slackForm(`status ${id}`, 'UREADER'))).body.text).toMatch(/^No operation/);
    expect((await sendSlack(slackForm(`terminate ${id}`))).body.text).toMatch(/may not call orchestrations-terminate/);
    const usage = await sendSlack(slackForm(`usage ${subscription} westus`, 'UREADER'));
    expect(usage.body.text).toMatch(/^Usage in westus\nResource 0 in westus: 0 of 100/);
    const cert = await sendSlack(slackForm('cert 7/cccccccc-0000-4000-8000-000000000009', 'UREADER'));
    expect(cert.body.text).toBe('No certificate has been fetched for this environment.');
  });

  it.each(['null', '{"value":[null, 7, "x"]}', '[]', '"text"', 'not json'])(
    'usage answered 200 %s by the upstream: a message saying what it got, never "try again" nor an error logged',
    async (body) => {
      gateway.emulator.script({ kind: 'answer', method: 'GET', pathPattern: 'usages$', status: 200, body, headers: { 'content-type': 'application/json' } });
      const errorsBefore = gateway.logLines.filter((line) => line.includes('A chat command failed')).length;
      const answer = await sendSlack(slackForm(`usage ${subscription} westus`, 'UREADER'));
      expect(answer.status).toBe(200);
      expect(answer.body.text).toMatch(
        /^(The upstream answered with a usage list this app cannot read|Usage in westus$|The command failed\.\nThe upstream answered 200 with a body that is not JSON)/,
      );
      expect(answer.body.text).not.toMatch(/Try again/);
      expect(gateway.logLines.filter((line) => line.includes('A chat command failed')).length).toBe(errorsBefore);
    },
  );

  it("Slack's certificate check (a signed ssl_check=1, no team or user): 200 and nothing else; unsigned, 401", async () => {
    const before = { migrations: migrations(), posts: posts.length };
    const body = new URLSearchParams({ ssl_check: '1', token: 'deprecated-verification-token' }).toString();
    const signed = await request(`${gateway.url}/api/chatops/slack`, { method: 'POST', headers: slackHeaders(body), body });
    expect(signed.statusCode).toBe(200);
    expect(await signed.body.text()).toBe('');
    const unsigned = await request(`${gateway.url}/api/chatops/slack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(unsigned.statusCode).toBe(401);
    await unsigned.body.dump();
    expect({ migrations: migrations(), posts: posts.length }).toEqual(before);
  });

  it('help lists the commands under one heading', async () => {
    const answer = await sendSlack(slackForm('help'));
    expect(answer.status).toBe(200);
    expect(answer.body.text).toMatch(/^Commands this app takes:\n`status <id>`/);
    expect(answer.body.text).not.toContain('Commands:');
  });

  describe('refused before any upstream call', () => {
    const command = `migrate ${subscription}/rg-chat/apim-refused`;

    it.each([
      ['a bad signature', (body: string) => slackHeaders(body, { secret: 'another-secret-of-the-same-kind' })],
      ['a stale timestamp', (body: string) => slackHeaders(body, { timestamp: Math.floor(Date.now() / 1000) - 600 })],
      ['no signature', () => ({ 'content-type': 'application/x-www-form-urlencoded' })],
    ])('%s: 401 in the documented error shape', async (_name, headersOf) => {
      const before = migrations();
      const body = slackForm(command);
      const answer = await sendSlack(body, headersOf(body));
      expect(answer.status).toBe(401);
      expect(answer.body.error?.code).toBe('Unauthorized');
      expect(migrations()).toBe(before);
    });

    it('a replay of a signed command: 401, and the command ran once', async () => {
      const body = slackForm('help');
      const headers = slackHeaders(body);
      expect((await sendSlack(body, headers)).status).toBe(200);
      const replay = await sendSlack(body, headers);
      expect(replay.status).toBe(401);
      expect(replay.body.error?.code).toBe('Unauthorized');
    });

    it('an unknown user: a message saying so, nothing started', async () => {
      const before = migrations();
      const answer = await sendSlack(slackForm(command, 'UNOBODY'));
      expect(answer.status).toBe(200);
      expect(answer.body.text).toContain(`slack:${team}/UNOBODY`);
      expect(answer.body.text).toMatch(/no rights/);
      expect(migrations()).toBe(before);
    });

    it("a command outside the user's scope: a message saying so, nothing started", async () => {
      const before = migrations();
      const answer = await sendSlack(slackForm(`migrate ${subscription}/rg-other/apim-x`));
      expect(answer.status).toBe(200);
      expect(answer.body.text).toMatch(/may not act on that scope/);
      expect(migrations()).toBe(before);
    });

    it('any text, signed: a message in HTTP 200, never a 500, nothing started', async () => {
      const before = migrations();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string({ maxLength: 300 }),
            fc.string({ unit: 'grapheme', maxLength: 60 }).map((rest) => `migrate ${rest}`),
          ),
          async (text) => {
            const answer = await sendSlack(slackForm(text));
            expect(answer.status).toBe(200);
            expect(answer.body.text).toMatch(/\S/);
          },
        ),
        { numRuns: 60 },
      );
      expect(migrations()).toBe(before);
    });

    it.each([['deploy everything'], ['migrate https://evil.example.com/a/b'], [`status ${'x'.repeat(300)}`]])('%j: the usage message', async (text) => {
      const answer = await sendSlack(slackForm(text));
      expect(answer.status).toBe(200);
      expect(answer.body.text).toContain('Commands:');
    });

    it('a request over CHATOPS_MAX_BODY_BYTES (16 KiB by default), signed or not, is refused with 413 before anything is run', async () => {
      const before = migrations();
      const body = slackForm(`migrate ${'x'.repeat(17 * 1024)}`);
      const answer = await sendSlack(body);
      expect(answer.status).toBe(413);
      expect(answer.body.error?.code).toBe('PayloadTooLarge');
      expect(migrations()).toBe(before);
    });
  });
});

describe('Teams', () => {
  it('a migration is answered with an Adaptive Card, and its end is posted once to the workflow', async () => {
    const before = posts.filter((post) => post.path.startsWith('/workflows/')).length;
    const answer = await sendTeams(teamsActivity(`migrate ${subscription}/rg-chat/apim-teams`));
    expect(answer.status).toBe(200);
    expect(answer.body.type).toBe('message');
    expect(answer.body.attachments?.[0]).toMatchObject({ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard' } });
    const id = operationIdIn(answer.body.text)!;
    expect(id).toBeDefined();
    const ends = () => posts.filter((post) => post.path.startsWith('/workflows/')).slice(before);
    await pollUntil(() => ends().length > 0);
    for (let run = 0; run < 3; run += 1) await gateway.host.runTimer('orchestrationPoller');
    expect(ends()).toHaveLength(1);
    expect(ends()[0]!.path).toContain(`sig=${workflowSig}`);
    expect(ends()[0]!.body).toMatchObject({ type: 'message', text: expect.stringContaining(`Operation ${id} completed`) });
  });

  it('a bad HMAC, a stale activity and a replay: 401, nothing started', async () => {
    const before = migrations();
    const command = `migrate ${subscription}/rg-chat/apim-teams-refused`;
    expect((await sendTeams(teamsActivity(command), randomBytes(32).toString('base64'))).status).toBe(401);
    expect((await sendTeams(teamsActivity(command, teamsUser, new Date(Date.now() - 600_000).toISOString()))).status).toBe(401);
    const help = teamsActivity('help');
    expect((await sendTeams(help)).status).toBe(200);
    const replay = await sendTeams(help);
    expect(replay.status).toBe(401);
    expect(replay.body.error?.code).toBe('Unauthorized');
    expect(migrations()).toBe(before);
  });

  it('an unknown user and a command outside the scope: a message saying so, nothing started', async () => {
    const before = migrations();
    const stranger = await sendTeams(teamsActivity(`migrate ${subscription}/rg-chat/apim-t2`, 'cccccccc-0000-4000-8000-000000000003'));
    expect(stranger.body.text).toMatch(/no rights/);
    const outside = await sendTeams(teamsActivity(`migrate ${subscription}/rg-other/apim-t3`));
    expect(outside.body.text).toMatch(/may not act on that scope/);
    expect(migrations()).toBe(before);
  });
});

describe('secrets', () => {
  it('never reach the log', () => {
    const log = gateway.logLines.join('\n');
    for (const secret of [slackSecret, teamsToken, workflowSig, '/commands/']) expect(log).not.toContain(secret);
  });
});
