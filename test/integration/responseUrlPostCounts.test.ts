/**
 * The posts per Slack response_url counted app-wide (storage/useCounters.ts,
 * chatops/responseUrlPosts.ts) on Azurite: several chat notifiers on one container stand for the
 * instances, posting to a local stand-in of Slack. What a post costs in storage requests, that the
 * instances together stop at the bound however their posts interleave, that the janitor removes
 * the counts once the response_url expired, and that a stalled storage leaves each instance
 * counting on its own, from the last count it saw, with one log line, trying storage again after
 * a while, and losing no post it counted alone to a write under way meanwhile.
 */
import { ChatNotifier } from '../../src/chatops/chatNotifier';
import { chatTargetUrl } from '../../src/chatops/chatPlatform';
import { responseUrlLifetimeMs } from '../../src/chatops/slack/slackCommand';
import { slack } from '../../src/chatops/slack/slackPlatform';
import { parseConfig } from '../../src/settings/config';
import { countRetryAfterMs } from '../../src/chatops/slack/responseUrlPosts';
import { deliveryPool, type CloudEvent } from '../../src/notifications/notificationSender';
import { defaultOrchestrationSettings, engineOnContainer } from '../../src/orchestration/orchestrationEngine';
import { allExpiring, OnceMarkers } from '../../src/storage/onceMarkers';
import { StorageBudget } from '../../src/storage/storageBudget';
import { UseCounters } from '../../src/storage/useCounters';
import { startChatPostReceiver, type ChatPostReceiver } from '../helpers/chatPostReceiver';
import { countingStorage, type CountingStorage, type Stall } from '../../tools/harness/countingStorage';
import { blobNames, retentionMs, token, upstreamOf, useEngineFixture } from '../helpers/engineFixture';

const fx = useEngineFixture();
const lifetimeMs = responseUrlLifetimeMs + 5 * 60_000;
const prefix = 'chat-posts/';
const pool = deliveryPool();
let receiver: ChatPostReceiver;
const logs: string[] = [];

beforeAll(async () => {
  receiver = await startChatPostReceiver();
});
afterAll(async () => {
  await pool.close();
  await receiver.close();
});
beforeEach(() => {
  receiver.posts.splice(0);
  logs.splice(0);
});

function countsOn(storage: CountingStorage = fx.storage, timeoutMs = 5000): UseCounters {
  return new UseCounters(storage.service.getContainerClient(fx.container), prefix, new StorageBudget(timeoutMs, 'Response URL post counts'), lifetimeMs);
}

/** One instance's notifier, counting on `counts`. */
function instance(counts: UseCounters, maxPosts = 5): ChatNotifier {
  // The bound is Slack's (at most 5), which a test of the counting may pass.
  const config = {
    ...parseConfig({ MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' }),
    CHATOPS_RESPONSE_URL_MAX_POSTS: maxPosts,
    CHATOPS_REPLAY_CACHE_SIZE: 100,
  };
  const context = { config, postCounts: counts, now: () => fx.clock, log: (line: string) => logs.push(line) };
  return new ChatNotifier({ senders: new Map([[slack.name, slack.endSender(context)]]), timeoutMs: 5000, dispatcher: pool });
}

const event: CloudEvent = {
  specversion: '1.0',
  id: 'e1',
  source: 'https://gw/api',
  type: 'gateway.orchestration.completed',
  subject: 'o1',
  time: '2026-06-01T00:00:00.000Z',
  datacontenttype: 'application/json',
  data: {
    id: 'o1',
    name: 'ApiManagementService_MigrateToStv2',
    runtimeStatus: 'Completed',
    output: { status: 200 },
    failure: null,
    endedTime: '2026-06-01T00:00:00.000Z',
  },
};

/** A command's response_url issued now, as the chat route names it in the orchestration's target. */
const responseUrlTarget = (name: string) =>
  chatTargetUrl({ platform: 'slack', url: `${receiver.origin}/commands/T1/${name}?token=s3cret`, untilMs: fx.clock + responseUrlLifetimeMs });
/** The text of the test's one count record. */
async function recordedCount(): Promise<unknown> {
  const names = await blobNames(fx, prefix);
  expect(names).toHaveLength(1);
  const text = await fx.storage.service.getContainerClient(fx.container).getBlockBlobClient(names[0]!).downloadToBuffer();
  return JSON.parse(text.toString('utf8'));
}

const postsTo = (name: string) => receiver.posts.filter((post) => post.path.includes(`/${name}?`)).length;

it('one conditional write per post; a read as well when another instance posted since', async () => {
  const [first, second] = [instance(countsOn()), instance(countsOn())];
  const target = responseUrlTarget('cost');
  const countRequests = () => fx.storage.requests.filter((line) => line.includes(prefix));
  await first.send(target, event);
  fx.storage.reset();
  await first.send(target, event);
  // This instance wrote last: its ETag holds, one conditional replace.
  expect(countRequests()).toEqual([expect.stringMatching(/^PUT /)]);
  fx.storage.reset();
  await second.send(target, event);
  // Never seen here: the create fails its condition, a read, a replace.
  expect(countRequests()).toEqual([expect.stringMatching(/^PUT /), expect.stringMatching(/^GET /), expect.stringMatching(/^PUT /)]);
  fx.storage.reset();
  await first.send(target, event);
  // Another instance wrote since: the replace fails its condition, a read, a replace.
  expect(countRequests()).toHaveLength(3);
  expect(postsTo('cost')).toBe(4);
  // The record is named by a hash: the URL and its token are nowhere in storage.
  expect((await blobNames(fx, prefix)).join(' ')).not.toMatch(/commands|s3cret/);
});

it.each([2, 4])('%i instances posting to one response_url at once stop at the bound in all', async (count) => {
  const instances = Array.from({ length: count }, () => instance(countsOn(), 5));
  const target = responseUrlTarget(`race${count}`);
  const outcomes = await Promise.all(instances.flatMap((each) => [1, 2, 3].map(() => each.send(target, event))));
  expect(postsTo(`race${count}`)).toBe(5);
  expect(outcomes.filter((outcome) => outcome.delivered)).toHaveLength(5);
  expect(outcomes.filter((outcome) => !outcome.delivered)).toEqual(
    Array(3 * count - 5).fill({ delivered: false, retriable: false, error: 'response_url took its 5 posts' }),
  );
  // A later post by any of them is refused too, the one that knows the count at no storage request.
  fx.storage.reset();
  expect(await instances[0]!.send(target, event)).toMatchObject({ delivered: false });
  expect(postsTo(`race${count}`)).toBe(5);
});

it('are removed by the janitor once the response_url expired, in the same bounded batch as the replay records', async () => {
  const counts = countsOn();
  const replays = new OnceMarkers(
    fx.storage.service.getContainerClient(fx.container),
    'chat-replay/',
    new StorageBudget(5000, 'Chat replay records'),
    10 * 60_000,
  );
  const engine = engineOnContainer(fx.storage.service.getContainerClient(fx.container), {
    storageTimeoutMs: 5000,
    upstream: upstreamOf(fx),
    expiringMarkers: allExpiring([replays, counts]),
    settings: { ...defaultOrchestrationSettings, retentionMs, recordsBatch: 3 },
    now: () => fx.clock,
    log: () => undefined,
  });
  // Two replay records and three counts expired, one count live.
  for (const index of [1, 2]) await replays.take(fx.clock - 11 * 60_000 - index, `slack/old${index}`);
  for (const index of [1, 2, 3]) await counts.take(fx.clock - lifetimeMs - index, `old${index}`, 5);
  await counts.take(fx.clock - responseUrlLifetimeMs, 'live', 5);
  await engine.sweep(token);
  // Three in all in one run: the replay records first, then one count.
  expect(await blobNames(fx, 'chat-replay/')).toEqual([]);
  expect(await blobNames(fx, prefix)).toHaveLength(3);
  await engine.sweep(token);
  expect((await blobNames(fx, prefix)).map((name) => name.split('/').pop())).toEqual(['live']);
  fx.clock += 5 * 60_000 + 1;
  await engine.sweep(token);
  expect(await blobNames(fx, prefix)).toEqual([]);
});

describe('storage that stalls', () => {
  it('leaves each instance counting its own posts from the last count it saw, with one log line, and the record catches up after', async () => {
    let stalled = false;
    const stall = (line: string): Stall | undefined => (stalled && line.includes(prefix) ? 'request' : undefined);
    const storage = countingStorage(fx.azurite.connectionString, () => 0, stall);
    const [first, second] = [instance(countsOn(storage, 300)), instance(countsOn(storage, 300))];
    const target = responseUrlTarget('stalled');
    await first.send(target, event);
    await first.send(target, event);
    await second.send(target, event);
    stalled = true;
    storage.reset();
    // The first saw 2 app-wide: it may post 3 more on its own; the second saw 3: 2 more.
    const firstOutcomes: { delivered: boolean }[] = [];
    for (const _post of [1, 2, 3, 4]) firstOutcomes.push(await first.send(target, event));
    const secondOutcomes: { delivered: boolean }[] = [];
    for (const _post of [1, 2, 3]) secondOutcomes.push(await second.send(target, event));
    expect(firstOutcomes.filter((outcome) => outcome.delivered)).toHaveLength(3);
    expect(secondOutcomes.filter((outcome) => outcome.delivered)).toHaveLength(2);
    // One failed try and one line per instance: the posts after it do not wait on storage.
    expect(storage.requests.filter((line) => line.includes(prefix))).toHaveLength(2);
    expect(logs.filter((line) => line.includes('"subject":"response_url post counts","state":"down"'))).toHaveLength(2);
    expect(logs.join('\n')).not.toContain('s3cret');
    // Storage answers again, tried after the retry time: the 3 posts the first made meanwhile are
    // added to the 3 of the record, which refuses the next (without a post).
    stalled = false;
    expect(await first.send(target, event)).toMatchObject({ delivered: false });
    expect(storage.requests.filter((line) => line.includes(prefix))).toHaveLength(2);
    fx.clock += countRetryAfterMs;
    expect(await first.send(target, event)).toMatchObject({ delivered: false });
    expect(storage.requests.filter((line) => line.includes(prefix)).length).toBeGreaterThan(2);
    // The first is back on the shared count, said once with how long it was without.
    expect(logs.filter((line) => line.includes('"state":"back"')).map((line) => JSON.parse(line))).toEqual([
      { event: 'storage', subject: 'response_url post counts', state: 'back', downForMs: countRetryAfterMs },
    ]);
    expect(await recordedCount()).toEqual({ count: 6 });
    expect(postsTo('stalled')).toBe(8);
  });

  it('loses no post counted alone while a write was under way: the write subtracts only those it carried', async () => {
    // Each count request: sent as is, failed at once (storage down), or held until the test lets it go.
    let script: 'send' | 'fail' | { held: Promise<void> } = 'send';
    const delay = (line: string) => {
      if (!line.includes(prefix) || script === 'send') return 0;
      return script === 'fail' ? Promise.reject(new Error('storage down')) : script.held;
    };
    const storage = countingStorage(fx.azurite.connectionString, delay);
    const single = instance(countsOn(storage, 5000), 10);
    const target = responseUrlTarget('overlap');
    // A post while storage is down: counted here alone (1 unrecorded).
    script = 'fail';
    expect(await single.send(target, event)).toMatchObject({ delivered: true });
    // Past the retry time, a post tries storage, carrying that 1; its write is held.
    let letGo = () => undefined as void;
    script = { held: new Promise<void>((resolve) => (letGo = resolve)) };
    fx.clock += countRetryAfterMs;
    const carrying = single.send(target, event);
    // Meanwhile another post does not wait on storage: counted here alone.
    expect(await single.send(target, event)).toMatchObject({ delivered: true });
    letGo();
    expect(await carrying).toMatchObject({ delivered: true });
    // The held write recorded 2 (the post it carried and its own); the one counted meanwhile goes with the next.
    script = 'send';
    expect(await single.send(target, event)).toMatchObject({ delivered: true });
    expect(await recordedCount()).toEqual({ count: 4 });
    expect(postsTo('overlap')).toBe(4);
  });
});
