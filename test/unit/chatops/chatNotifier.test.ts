/**
 * The chat notifier: a chat target's end goes out as the platform's message, a response_url
 * past its 30 minutes goes to SLACK_WEBHOOK_URL instead, no response_url gets more than its
 * posts, and every other target goes to the CloudEvent sender as before.
 */
import { ChatNotifier } from '../../../src/chatops/chatNotifier';
import { chatTargetOf, chatTargetUrl } from '../../../src/chatops/chatPlatform';
import { chatNotifierOf, chatPlatforms } from '../../../src/chatops/platforms';
import { responseUrlLifetimeMs } from '../../../src/chatops/slack/slackCommand';
import { parseConfig } from '../../../src/settings/config';
import { deliveryPool, type CloudEvent } from '../../../src/notifications/notificationSender';
import { startChatPostReceiver, type ChatPostReceiver } from '../../helpers/chatPostReceiver';

let receiver: ChatPostReceiver;
let posts: ChatPostReceiver['posts'];
let origin = '';
const pool = deliveryPool();

beforeAll(async () => {
  receiver = await startChatPostReceiver((path) => (path.includes('busy') ? 503 : 200));
  ({ posts, origin } = receiver);
});
afterAll(async () => {
  await pool.close();
  await receiver.close();
});
beforeEach(() => posts.splice(0));

const id = '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122';
const event = (runtimeStatus: string): CloudEvent => ({
  specversion: '1.0',
  id: 'e1',
  source: 'https://gw/api',
  type: `gateway.orchestration.${runtimeStatus.toLowerCase()}`,
  subject: id,
  time: '2026-01-01T00:00:00.000Z',
  datacontenttype: 'application/json',
  data: { id, name: 'ApiManagementService_MigrateToStv2', runtimeStatus, output: { status: 200 }, failure: null, endedTime: '2026-01-01T00:00:00.000Z' },
});

function notifier(now: number, options: { slackWebhookUrl?: string; maxPosts?: number; events?: ChatNotifier['send'] } = {}) {
  const config = parseConfig({
    MANAGEMENT_BASE_URL: 'https://management.example.com',
    LIFECYCLE_BASE_URL: 'https://lcs.example.com',
    ...(options.slackWebhookUrl ? { SLACK_WEBHOOK_URL: options.slackWebhookUrl } : {}),
    CHATOPS_RESPONSE_URL_MAX_POSTS: String(options.maxPosts ?? 5),
    CHATOPS_REPLAY_CACHE_SIZE: '100',
  });
  const context = { config, now: () => now, log: () => undefined };
  return new ChatNotifier({
    events: options.events ? { send: options.events } : undefined,
    senders: new Map(chatPlatforms.map((platform) => [platform.name, platform.endSender(context)])),
    timeoutMs: 5000,
    dispatcher: pool,
  });
}

it('a target keeps its URL, query included, with the platform and expiry in a fragment that is never sent', async () => {
  const target = chatTargetUrl({ platform: 'teams', url: `${origin}/workflows/w?sig=s3cret` });
  expect(chatTargetOf(target, ['slack', 'teams'])).toEqual({ platform: 'teams', url: `${origin}/workflows/w?sig=s3cret` });
  expect(await notifier(0).send(target, event('Completed'))).toEqual({ delivered: true });
  expect(posts[0]).toMatchObject({ path: '/workflows/w?sig=s3cret', body: { type: 'message', text: expect.stringContaining(`Operation ${id} completed`) } });
});

it('a response_url within its time gets the ephemeral end; past it, the channel webhook does', async () => {
  const target = chatTargetUrl({ platform: 'slack', url: `${origin}/commands/T1/one`, untilMs: responseUrlLifetimeMs });
  expect(await notifier(responseUrlLifetimeMs, { slackWebhookUrl: `${origin}/services/hook` }).send(target, event('Failed'))).toEqual({ delivered: true });
  expect(posts[0]).toMatchObject({ path: '/commands/T1/one', body: { response_type: 'ephemeral', replace_original: false } });
  expect(await notifier(responseUrlLifetimeMs + 1, { slackWebhookUrl: `${origin}/services/hook` }).send(target, event('Failed'))).toEqual({ delivered: true });
  expect(posts[1]!.path).toBe('/services/hook');
  expect(posts[1]!.body.response_type).toBeUndefined();
  expect(await notifier(responseUrlLifetimeMs + 1).send(target, event('Failed'))).toEqual({
    delivered: false,
    retriable: false,
    error: expect.stringContaining('SLACK_WEBHOOK_URL'),
  });
  expect(posts).toHaveLength(2);
});

it('no response_url is posted to more than its bound, failed attempts included', async () => {
  const sender = notifier(0, { maxPosts: 2 });
  const target = chatTargetUrl({ platform: 'slack', url: `${origin}/commands/T1/busy`, untilMs: responseUrlLifetimeMs });
  const outcomes = [
    await sender.send(target, event('Completed')),
    await sender.send(target, event('Completed')),
    await sender.send(target, event('Completed')),
  ];
  expect(outcomes.map((outcome) => outcome.delivered || outcome.retriable)).toEqual([true, true, false]);
  expect(posts).toHaveLength(2);
});

it('every other target goes to the CloudEvent sender, or is refused when there is none', async () => {
  const sent: string[] = [];
  const events = async (target: string) => {
    sent.push(target);
    return { delivered: true } as const;
  };
  expect(await notifier(0, { events }).send(`${origin}/hooks/x`, event('Completed'))).toEqual({ delivered: true });
  expect(sent).toEqual([`${origin}/hooks/x`]);
  expect(await notifier(0).send(`${origin}/hooks/x`, event('Completed'))).toMatchObject({ delivered: false, retriable: false });
  expect(posts).toEqual([]);
});

it("posts on the pool the engine's CloudEvents use, so the app closes one pool, not two", async () => {
  const teamsUser = 'teams:aaaaaaaa-0000-4000-8000-000000000001/bbbbbbbb-0000-4000-8000-000000000002';
  const config = parseConfig({
    MANAGEMENT_BASE_URL: 'https://management.example.com',
    LIFECYCLE_BASE_URL: 'https://lcs.example.com',
    TEAMS_WEBHOOK_SECRET: Buffer.from('thirty-two bytes of a teams toke').toString('base64'),
    ACCESS_POLICY: JSON.stringify([{ callers: [teamsUser], allow: ['read'] }]),
  });
  const shared = deliveryPool();
  const chat = chatNotifierOf(config, undefined, shared)!;
  const target = chatTargetUrl({ platform: 'teams', url: `${origin}/workflows/shared` });
  expect(await chat.send(target, event('Completed'))).toEqual({ delivered: true });
  await shared.close();
  // Closed with the shared pool: nothing of the notifier's own is left to post (or to leave open).
  expect(await chat.send(target, event('Completed'))).toMatchObject({ delivered: false });
  expect(posts).toHaveLength(1);
});
