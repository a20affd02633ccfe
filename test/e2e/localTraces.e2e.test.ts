/**
 * `npm start -- --traces` (docs/observability.md, "Try it locally"): without a collector, the
 * app's terminal shows each trace as a tree when it arrives: a container group's start with its
 * storage calls and upstream attempt, each poll linked to the start, and the notification of its
 * end linked to it too.
 */
import { request } from 'undici';
import { runAppExpectingFailure, startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startChatPostReceiver, type ChatPostReceiver } from '../helpers/chatPostReceiver';

const group = {
  location: 'westus',
  properties: { osType: 'Linux', containers: [{ name: 'web', properties: { image: 'nginx', resources: { requests: { cpu: 1, memoryInGB: 1.5 } } } }] },
};
let receiver: ChatPostReceiver;
let app: AppProcess;

beforeAll(async () => {
  receiver = await startChatPostReceiver();
  app = await startApp(
    {
      NOTIFY_ALLOWED_ORIGINS: JSON.stringify([receiver.origin]),
      NOTIFY_SIGNING_SECRET: 'whsec_hvy7P57fBWvLpmxOHsDK8vW9B51CybmV6eExbHNFRw0=',
      ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
    },
    { args: ['--traces'] },
  );
});
afterAll(async () => {
  await app.stop();
  await receiver.close();
});

async function lineMatching(pattern: RegExp): Promise<string> {
  for (let tries = 0; tries < 120; tries += 1) {
    const found = app.lines.find((line) => pattern.test(line));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`No line matches ${pattern}:\n${app.lines.join('\n')}`);
}

it('says at start that traces are on and printed here', () => {
  expect(app.lines).toEqual(
    expect.arrayContaining([expect.stringMatching(/^\s+telemetry\s+on: traces and metrics to OTLP to http:\/\/127\.0\.0\.1:\d+ \(http\/json\)$/)]),
  );
  expect(app.lines).toContain('Traces: each printed here as a tree as it arrives (--traces); docs/observability.md says what each span is.');
});

it("prints a start's trace, its polls and its notification, each linked to the start", async () => {
  const response = await request(
    `${app.url}/api/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/traced?api-version=2025-09-01`,
    {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-gateway-notify': `${receiver.origin}/hooks/gateway` },
      body: JSON.stringify(group),
    },
  );
  expect(response.statusCode).toBe(201);
  await response.body.dump();

  const start = await lineMatching(
    /^trace [0-9a-f]{8}  PUT ContainerGroups_CreateOrUpdate  \[server, [+-]\d+\.\ds, \d+ ms\]  http\.response\.status_code=201$/,
  );
  const traceId = /^trace ([0-9a-f]{8})/.exec(start)![1]!;
  const below = app.lines.slice(app.lines.indexOf(start) + 1);
  const tree = below.slice(
    0,
    below.findIndex((line) => !/^ {16}[├└]─ /.test(line)),
  );
  expect(tree).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^ {16}├─ storage create an orchestration  \[client, /),
      expect.stringMatching(
        /^ {16}[├└]─ PUT  \[client, .*\]  http\.response\.status_code=201  url\.full=http:\/\/127\.0\.0\.1:\d+\/…\/containerGroups\/traced\?api-version=2025-09-01$/,
      ),
    ]),
  );
  const linked = `link → trace ${traceId}`;
  const notify = await lineMatching(
    new RegExp(`^trace [0-9a-f]{8}  notify gateway\\.orchestration\\.completed  \\[producer, .*gateway\\.notification\\.delivered=true  ${linked}`),
  );
  expect(notify).toBeDefined();
  const polls = app.lines.filter((line) => /^trace [0-9a-f]{8}  poll ContainerGroups_CreateOrUpdate  \[consumer, /.test(line));
  expect(polls.length).toBeGreaterThanOrEqual(2);
  for (const poll of polls) expect(poll).toContain(linked);
  expect(polls.map((poll) => /poll_count=(\d+)/.exec(poll)?.[1])).toEqual(polls.map((_poll, index) => String(index)));
  expect(receiver.posts).toHaveLength(1);
});

it('refuses --traces beside a collector of its own, naming the setting', async () => {
  const { code, output } = await runAppExpectingFailure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, { args: ['--traces'] });
  expect(code).toBe(1);
  expect(output).toContain('--traces prints the traces here instead of exporting them, and OTEL_EXPORTER_OTLP_ENDPOINT is set too');
});
