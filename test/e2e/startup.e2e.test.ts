/**
 * What `npm start` says about what it runs: one block of the effective settings (no secret in
 * it), the routes in one line unless `--verbose`, and a refusal with a way out for a half set
 * of upstreams or a port already taken.
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { runAppExpectingFailure, startApp } from '../../tools/harness/appProcess';
import { startGateway } from '../../tools/harness/gatewayFixture';
import { startOtlpReceiver } from '../helpers/otlpReceiver';

function block(lines: readonly string[]): string[] {
  const start = lines.indexOf('Effective settings:');
  const rows: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    rows.push(line.trim().replace(/\s{2,}/, ' | '));
  }
  return rows;
}

it('prints the embedded defaults it started and the routes in one line; health says what a 401 to its probe means', async () => {
  const app = await startApp({});
  try {
    const rows = block(app.lines);
    expect(rows).toEqual([
      expect.stringMatching(/^upstreams \| embedded management emulator \(http:\/\/127\.0\.0\.1:\d+\); set MANAGEMENT_BASE_URL and LIFECYCLE_BASE_URL/),
      "upstream auth | static: the embedded emulator's token",
      expect.stringMatching(/^storage \| embedded Azurite in memory \(http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1\)/),
      'namespace | Vendor',
      'public URL | APP_PUBLIC_URL not set: links name the address each request came to',
      'access | not enforced: ACCESS_POLICY not set (the warning above says what that allows)',
      'Slack | off (POST chatops/slack answers 404): SLACK_SIGNING_SECRET not set, no ACCESS_POLICY rule names a slack: user',
      'Teams | off (POST chatops/teams answers 404): TEAMS_WEBHOOK_SECRET not set, no ACCESS_POLICY rule names a teams: user',
      'notifications | off: NOTIFY_SIGNING_SECRET not set, so no CloudEvent is sent (docs/notifications.md)',
      'telemetry | off: neither OTEL_EXPORTER_OTLP_ENDPOINT nor APPLICATIONINSIGHTS_CONNECTION_STRING set (docs/observability.md)',
      'schedules | poller */10 * * * * *; certificate refresh 0 0 */6 * * * (no CERT_ENVIRONMENTS)',
      expect.stringMatching(/^function keys \| not checked/),
    ]);
    // The chat routes answer 404 until their platform is set up: named as off, not as served.
    expect(app.lines.filter((line) => line.startsWith('Routes: '))).toEqual([
      expect.stringMatching(
        /^Routes: \d+ under \/api\/ \(anonymous: health, console, console-asset; the others need a function key; chatops-slack, chatops-slack-interactive and chatops-teams are off \(404\) until set up, as the settings above say\) and .*--verbose lists each$/,
      ),
    ]);
    expect(app.lines.filter((line) => /^\s+GET/.test(line))).toEqual([]);
    // The emulator, like the real upstreams, answers 401 to the probe, which sends no token.
    const health = (await (await fetch(`${app.url}/api/health`)).json()) as { dependencies: Record<string, { ok: boolean; detail: string }> };
    expect(health.dependencies.management).toMatchObject({
      ok: true,
      detail: 'reachable (HTTP 401 to an anonymous probe: the expected answer, as the probe sends no token; calls carry one)',
    });
    // One terminal format: the app's own lines, context.log's and the host's alike, each message once.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(app.lines.filter((line) => /^\[\w+:\w+\]/.test(line))).toEqual([]);
    expect(app.lines.filter((line) => line.includes('every caller with a function key may call every operation'))).toHaveLength(1);
    expect(app.callRecords()).toEqual([expect.objectContaining({ event: 'call', operation: 'health', status: 200 })]);
    expect(app.lines.filter((line) => line.includes('"event":"call"')).every((line) => line.startsWith('{"event":"call"'))).toBe(true);
  } finally {
    await app.stop();
  }
});

it('names the storage account and upstreams it was given, never the account key, and lists routes with --verbose', async () => {
  const gateway = await startGateway(
    {
      ACCESS_POLICY: JSON.stringify([{ callers: ['*'], allow: ['read'] }]),
      APP_PUBLIC_URL: 'https://gw.contoso.example/api',
      LOCAL_HOST_KEYS: '{"default":"0123456789abcdef-key"}',
    },
    {},
    { args: ['--verbose'] },
  );
  try {
    const rows = block(gateway.app.lines);
    expect(rows).toEqual(
      expect.arrayContaining([
        `upstreams | management ${gateway.emulator.url}, lifecycle ${gateway.emulator.url}`,
        'upstream auth | static: UPSTREAM_STATIC_TOKEN',
        `storage | account devstoreaccount1 at ${new URL(gateway.azurite.blobEndpoint).origin}`,
        'public URL | https://gw.contoso.example/api',
        'access | ACCESS_POLICY enforced (1 rule)',
        'function keys | checked (LOCAL_HOST_KEYS: 1)',
      ]),
    );
    const accountKey = /AccountKey=([^;]+)/.exec(gateway.env.AzureWebJobsStorage!)![1]!;
    expect(gateway.app.lines.join('\n')).not.toContain(accountKey);
    expect(gateway.app.lines).toContain('Routes:');
    expect(gateway.app.lines).toEqual(expect.arrayContaining([expect.stringMatching(/^\s+GET\s+\/api\/health \(health, anonymous\)$/)]));
    expect(gateway.app.lines).toEqual(expect.arrayContaining([expect.stringMatching(/^\s+POST\s+\/api\/chatops\/slack \(chatops-slack, off: answers 404\)$/)]));
  } finally {
    await gateway.stop();
  }
});

it('says which of Slack, Teams, notifications and telemetry are on (no secret, no webhook path), and lists a chat route once its platform is on', async () => {
  const collector = await startOtlpReceiver();
  const app = await startApp({
    SLACK_SIGNING_SECRET: 'CANARY-slack-signing-secret-0001',
    TEAMS_WEBHOOK_SECRET: Buffer.from('CANARY teams outgoing webhook token').toString('base64'),
    ACCESS_POLICY: JSON.stringify([{ callers: ['slack:T1/U1'], allow: ['read'] }]),
    NOTIFY_SIGNING_SECRET: 'whsec_hvy7P57fBWvLpmxOHsDK8vW9B51CybmV6eExbHNFRw0=',
    NOTIFY_ALLOWED_ORIGINS: '["https://hooks.example.com"]',
    NOTIFY_URL: 'https://events.example.com/hook?code=CANARY',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    TELEMETRY_SAMPLING_RATIO: '0.5',
  });
  try {
    expect(block(app.lines)).toEqual(
      expect.arrayContaining([
        'Slack | on: POST chatops/slack; ends posted to response_urls at https://hooks.slack.com',
        'Teams | off (POST chatops/teams answers 404): no ACCESS_POLICY rule names a teams: user',
        'notifications | on: signed CloudEvents to x-gateway-notify targets at 1 allowed origin and to NOTIFY_URL (https://events.example.com) for every orchestration',
        `telemetry | on: traces and metrics to OTLP to ${collector.url} (http/protobuf), 0.5 of new traces kept`,
      ]),
    );
    expect(app.lines.filter((line) => line.startsWith('Routes: '))).toEqual([
      expect.stringMatching(
        /^Routes: \d+ under \/api\/ \(anonymous: health, console, chatops-slack, chatops-slack-interactive, console-asset; the others need a function key; chatops-teams is off \(404\) until set up, as the settings above say\) and /,
      ),
    ]);
    expect(app.lines.join('\n')).not.toMatch(/CANARY|whsec_|hook\?code/);
  } finally {
    await app.stop();
    await collector.close();
  }
});

it.each(['MANAGEMENT_BASE_URL', 'LIFECYCLE_BASE_URL'])('refuses to start with %s alone, naming both settings', async (name) => {
  const { code, output } = await runAppExpectingFailure({ [name]: 'https://management.example.com' });
  expect(code).toBe(1);
  expect(output).toMatch(/MANAGEMENT_BASE_URL is set but LIFECYCLE_BASE_URL is not|LIFECYCLE_BASE_URL is set but MANAGEMENT_BASE_URL is not/);
  expect(output).toContain('Set both MANAGEMENT_BASE_URL and LIFECYCLE_BASE_URL to use real upstreams, or neither');
  expect(output).not.toContain('listening on');
});

it('refuses a malformed LOCAL_HOST_KEYS before starting anything, naming it and none of its text', async () => {
  const { code, output } = await runAppExpectingFailure({ LOCAL_HOST_KEYS: '{"master": "CANARY-SECRET-h2v' });
  expect(code).toBe(1);
  expect(output).toMatch(/^LOCAL_HOST_KEYS is not valid JSON: it must be a JSON object of key names to key values/m);
  expect(output).not.toContain('CANARY');
  expect(output).not.toContain('Function app:');
});

describe('a port already taken', () => {
  let holder: Server;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('says the port is in use and how to choose another', async () => {
    const port = (holder.address() as AddressInfo).port;
    const { code, output } = await runAppExpectingFailure({ PORT: String(port) });
    expect(code).toBe(1);
    expect(output).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(output).toMatch(/npm start -- --port <N>, the PORT setting, or Host\.LocalHttpPort in local\.settings\.json/);
    expect(output).not.toContain('EADDRINUSE');
  });

  it("says the emulator's port is in use and how to choose another, rather than crashing", async () => {
    const port = (holder.address() as AddressInfo).port;
    const { code, output } = await runAppExpectingFailure({ EMULATOR_PORT: String(port) });
    expect(code).toBe(1);
    expect(output).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(output).toMatch(/choose another port: the EMULATOR_PORT setting/);
    expect(output).not.toContain('EADDRINUSE');
  });

  it('names an emulator setting that is not a whole number in its range', async () => {
    const { code, output } = await runAppExpectingFailure({ EMULATOR_LRO_STEPS: 'many' });
    expect(code).toBe(1);
    expect(output).toContain('EMULATOR_LRO_STEPS must be a whole number from 0 to 1000.');
  });
});

it('says why the poller has no token and which settings to look at, and runs on without polls', async () => {
  const gateway = await startGateway({
    UPSTREAM_AUTH: 'managed',
    UPSTREAM_STATIC_TOKEN: '',
    ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
    AZURE_CLIENT_ID: 'not-a-real-identity',
  });
  try {
    const deadline = Date.now() + 60_000;
    let line: string | undefined;
    while (!line && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      line = gateway.app.lines.find((candidate) => candidate.includes('The orchestration poller made no polls'));
    }
    expect(line).toMatch(/No token could be obtained for the management upstream: .+\. Look at the app's managed identity \(AZURE_CLIENT_ID/);
    expect(line).toContain(`MANAGEMENT_TOKEN_SCOPE (now ${gateway.emulator.url}/.default)`);
    expect(line).toContain('UPSTREAM_AUTH (now managed;');
    expect(gateway.app.lines.some((candidate) => candidate.includes('Timer function "orchestrationPoller" failed'))).toBe(false);
  } finally {
    await gateway.stop();
  }
});
