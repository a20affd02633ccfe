/**
 * Two promises held by the whole app, not by each instance: the app's instances are separate
 * processes sharing one storage account (Azurite), as Azure Functions runs them when it scales out.
 *
 * - A Slack response_url gets at most CHATOPS_RESPONSE_URL_MAX_POSTS posts from all instances
 *   together: the retries of a chat command's end, made by one instance and then another, stop at
 *   the bound (storage/useCounters.ts).
 * - A receiver gone dark is probed once per cool-down by the whole app, not once by each instance
 *   (orchestration/sharedCircuit.ts), and one answered probe opens it again for all.
 *
 * What is counted is work (posts, attempts), against a bound that a slower machine only lowers.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startChatPostReceiver, type ChatPostReceiver } from '../helpers/chatPostReceiver';
import { chatIdentities, sendChat } from '../helpers/chatSigning';
import { notifyingFastPolling, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';
import { slackCommandRequest } from '../../tools/chatRequests';

jest.setTimeout(180_000);

const subscription = '11111111-2222-3333-4444-555555555555';
const fastPolling = { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', LRO_DEFAULT_POLL_SECONDS: '1' };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `done`, checking every 250 ms, at most `limitMs` (a generous bound, not a timing). */
async function waitFor(done: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await pause(250);
  }
  return done();
}

describe('a Slack response_url posted to by two instances, one after the other', () => {
  const { slackSecret, team, user } = chatIdentities('T0POSTS');
  const maxPosts = 2;
  let receiver: ChatPostReceiver;
  let gateway: GatewayFixture;
  let second: AppProcess | undefined;

  beforeAll(async () => {
    // Slack's stand-in answers every response_url post 503: the end is retried with back-off.
    receiver = await startChatPostReceiver((path) => (path.startsWith('/commands/') ? 503 : 200));
    gateway = await startGateway(
      {
        ...fastPolling,
        SLACK_SIGNING_SECRET: slackSecret,
        SLACK_RESPONSE_URL_ORIGINS: JSON.stringify([receiver.origin]),
        ACCESS_POLICY: JSON.stringify([
          { callers: [`slack:${team}/${user}`], allow: ['ApiManagementService_MigrateToStv2', 'read'], scopes: [`/subscriptions/${subscription}`] },
        ]),
        CHATOPS_RESPONSE_URL_MAX_POSTS: String(maxPosts),
        // The circuit stays out of it: every attempt is made when due.
        NOTIFY_CIRCUIT_FAILURES: '50',
      },
      { lroSteps: 1, retryAfterSeconds: 1 },
    );
  }, 60_000);
  afterAll(async () => {
    await second?.stop();
    await gateway?.stop();
    await receiver?.close();
  });

  it(`get CHATOPS_RESPONSE_URL_MAX_POSTS (${maxPosts}) posts in all, the second instance refusing the retry the first left`, async () => {
    const responseUrl = `${receiver.origin}/commands/${team}/${randomBytes(8).toString('hex')}`;
    const posts = () => receiver.posts.filter((post) => post.path === new URL(responseUrl).pathname).length;
    const command = slackCommandRequest(slackSecret, { team, user, text: `migrate ${subscription}/rg-posts/apim-posts`, responseUrl });
    const ack = await sendChat(gateway.app.url, 'slack', command.body, command.headers);
    const id = /Started operation ([0-9a-f-]{36})/.exec(ack.text ?? '')?.[1];
    expect(id).toBeDefined();
    // The first instance makes the first post and its retry (5 s later), both answered 503.
    expect(await waitFor(() => posts() >= maxPosts, 60_000)).toBe(true);
    await gateway.app.stop();
    // The second instance takes the next retry: refused, as the response_url took its posts.
    second = await startApp(gateway.env);
    gateway.others.push(second);
    const failed = (line: string) => line.includes('"event":"notification"') && line.includes(id!) && line.includes('"state":"failed"');
    expect(await waitFor(() => second!.lines.some(failed) || posts() > maxPosts, 90_000)).toBe(true);
    expect(posts()).toBe(maxPosts);
    expect(second.lines.find(failed)).toContain(`response_url took its ${maxPosts} posts`);
    expect([...gateway.app.lines, ...second.lines].join('\n')).not.toContain(new URL(responseUrl).pathname);
  });
});

describe.each([2, 4])('%i instances and a receiver gone dark', (count) => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const coolDownSeconds = 3;
  const failuresToOpen = 2;
  const state = { status: 503 };
  /** When each attempt reached the receiver (ms since the epoch, the instances' clock too). */
  const arrivals: number[] = [];
  let receiver: WebhookReceiver;
  let gateway: GatewayFixture;
  const others: AppProcess[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret, () => {
      arrivals.push(Date.now());
      return { status: state.status };
    });
    gateway = await startGateway(
      {
        ...notifyingFastPolling(receiver.origin, secret),
        NOTIFY_CIRCUIT_FAILURES: String(failuresToOpen),
        NOTIFY_CIRCUIT_COOLDOWN_SECONDS: String(coolDownSeconds),
        NOTIFY_ORIGIN_CONCURRENCY: '1',
        NOTIFY_MAX_ATTEMPTS: '50',
      },
      { lroSteps: 1, retryAfterSeconds: 1 },
    );
    others.push(...(await Promise.all(Array.from({ length: count - 1 }, () => startApp(gateway.env)))));
    gateway.others.push(...others);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(others.map((other) => other.stop()));
    await gateway?.stop();
    await receiver?.close();
  });

  it('is probed about once per cool-down by the whole app, and one answered probe opens it for every instance', async () => {
    const orchestrations = 20;
    const instances = [gateway.app, ...others];
    await Promise.all(
      Array.from({ length: orchestrations }, async (_unused, index) => {
        const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/dark-${index}-${randomUUID().slice(0, 6)}?api-version=2025-09-01`;
        const body = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
        const started = await request(`${instances[index % count]!.url}/api/${path}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-gateway-notify': receiver.url },
          body,
        });
        await started.body.dump();
        expect(started.statusCode).toBe(201);
      }),
    );
    // The circuit opens; every instance then runs at least twice before the window starts.
    expect(await waitFor(() => arrivals.length >= failuresToOpen, 60_000)).toBe(true);
    await pause(3000);
    const opening = arrivals.length;
    const windowStart = Date.now();
    await pause(12 * coolDownSeconds * 1000);
    const windowMs = Date.now() - windowStart;
    const probes = arrivals.filter((at) => at >= windowStart && at < windowStart + windowMs).length;
    // One probe per cool-down in all (a probe taken just before the window may arrive in it).
    const bound = Math.floor(windowMs / (coolDownSeconds * 1000)) + 2;
    console.log(
      `shared circuit, ${count} instances: ${opening} attempts before it opened, ${probes} probes in ${windowMs} ms (cool-down ${coolDownSeconds} s, bound ${bound}; each instance on its own would make about ${count} per cool-down)`,
    );
    expect(probes).toBeLessThanOrEqual(bound);
    expect(probes).toBeGreaterThanOrEqual(1);

    // The receiver answers again: one probe closes the circuit, and every instance delivers.
    const reopenedAt = receiver.deliveries.length;
    state.status = 204;
    const delivered = () => new Set(receiver.deliveries.slice(reopenedAt).map((delivery) => delivery.headers['webhook-id'])).size;
    expect(await waitFor(() => delivered() >= orchestrations, 120_000)).toBe(true);
    const container = BlobServiceClient.fromConnectionString(gateway.azurite.connectionString).getContainerClient('gateway-orchestrations');
    const circuits: string[] = [];
    for await (const blob of container.listBlobsFlat({ prefix: 'circuit/' })) circuits.push(blob.name);
    expect(circuits).toEqual([]);
  });
});
