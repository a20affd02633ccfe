/**
 * Notifications of an orchestration's end: one signed CloudEvent per target, at least once,
 * from the outbox in the orchestration's own document; retried on what may pass (503, a
 * timeout), never on what will not (400), never following a redirect, never with a token; a
 * crash between the end and the delivery, or in the middle of one, still delivers. The engine
 * against Azurite, the receiver a real local server that verifies every signature.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlobServiceClient } from '@azure/storage-blob';
import { deliveriesOf } from '../../src/notifications/notificationDispatcher';
import { NotificationSender } from '../../src/notifications/notificationSender';
import {
  defaultOrchestrationSettings,
  engineOnContainer,
  type OrchestrationEngine,
  type OrchestrationSettings,
  type StartRequest,
} from '../../src/orchestration/orchestrationEngine';
import { statusDocument } from '../../src/orchestration/statusDocument';
import type { UpstreamResponse } from '../../src/upstream/upstreamClient';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { startDarkReceiver, startWebhookReceiver, type DarkReceiver, type ScriptedReply, type WebhookReceiver } from '../helpers/webhookReceiver';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const appBase = 'https://gw.contoso.test/api';
let azurite: RunningAzurite;
let clock = Date.parse('2026-06-01T00:00:00Z');
const receivers: Pick<WebhookReceiver, 'close'>[] = [];
/** NOTIFY_ALLOWED_ORIGINS of the engines below: every receiver a test starts (see `receiver`). */
const allowedOrigins: string[] = [];
const logs: string[] = [];
/** Every engine made, to wait for the deliveries still in flight before storage stops. */
const engines: OrchestrationEngine[] = [];

interface EngineOptions {
  notifyUrl?: string;
  timeoutMs?: number;
  maxAttempts?: number;
  allowedOrigins?: string[];
  settings?: Partial<OrchestrationSettings>;
}

function makeEngine(container: string, options: EngineOptions = {}): OrchestrationEngine {
  const made = engineOnContainer(BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(container), {
    storageTimeoutMs: 5000,
    upstream: new UpstreamClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    deliveries: deliveriesOf({ notifier: new NotificationSender({ signingSecret: secret, timeoutMs: options.timeoutMs ?? 2000 }) }),
    settings: {
      ...defaultOrchestrationSettings,
      notifyUrl: options.notifyUrl,
      allowedOrigins: options.allowedOrigins ?? allowedOrigins,
      outbox: { maxAttempts: options.maxAttempts ?? 8, firstRetryMs: 1000, maxRetryMs: 60_000, claimMs: 5000 },
      // These receivers answer at once or within the attempt's budget: a run waits for them.
      deliveryWaitMs: 30_000,
      ...options.settings,
    },
    now: () => clock,
    log: (line) => logs.push(line),
  });
  engines.push(made);
  return made;
}

const bodyWithSecret = {
  location: 'westus',
  properties: {
    containers: [{ name: 'web', properties: { image: 'nginx', environmentVariables: [{ name: 'PASSWORD', secureValue: 'not-for-receivers-8841' }] } }],
  },
};

function groupStart(notifyTargets?: string[]): StartRequest {
  const path = `subscriptions/s/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/g-${randomUUID().slice(0, 8)}`;
  return {
    name: 'ContainerGroups_CreateOrUpdate',
    method: 'PUT',
    path,
    query: [],
    bodyText: JSON.stringify(bodyWithSecret),
    bodyValue: bodyWithSecret,
    resourceUrl: `http://127.0.0.1:9/${path}`,
    appBase,
    notifyTargets,
  };
}

/** An upstream that finished at once: the orchestration ends with its start. */
const finishedAtOnce = async (): Promise<UpstreamResponse> => ({
  status: 200,
  headers: {},
  bodyText: '{"name":"g","properties":{"provisioningState":"Succeeded"}}',
  attempts: 1,
});

async function darkReceiver(): Promise<DarkReceiver> {
  const started = await startDarkReceiver();
  receivers.push(started);
  allowedOrigins.push(started.origin);
  return started;
}

async function receiver(reply?: (attempt: number) => ScriptedReply): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(secret, reply);
  receivers.push(started);
  allowedOrigins.push(started.origin);
  return started;
}

let engine: OrchestrationEngine;
beforeAll(async () => {
  azurite = await startAzurite();
});
afterAll(async () => {
  await Promise.all(engines.map((made) => made.deliveriesSettled()));
  await Promise.all(receivers.map((started) => started.close()));
  await azurite.close();
});
beforeEach(() => {
  engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`);
});

it('tells each target once with a signed CloudEvent: the status without input, no token', async () => {
  const hooks = await receiver();
  const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
  expect(await engine.sweep(undefined)).toMatchObject({ delivered: 1 });
  expect(hooks.deliveries).toHaveLength(1);
  const [delivery] = hooks.deliveries;
  expect(delivery!.verified).toBe(true);
  expect(delivery!.eventProblem).toBeUndefined();
  expect(delivery!.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
  expect(delivery!.headers.authorization).toBeUndefined();
  expect(delivery!.event).toMatchObject({
    specversion: '1.0',
    id: delivery!.headers['webhook-id'],
    source: appBase,
    type: 'gateway.orchestration.completed',
    subject: outcome.state.id,
    data: { id: outcome.state.id, runtimeStatus: 'Completed', output: { status: 200 }, statusQueryGetUri: `${appBase}/orchestrations/${outcome.state.id}` },
  });
  expect(delivery!.event!.data).not.toHaveProperty('input');
  expect(delivery!.body).not.toContain('not-for-receivers-8841');

  // Delivered: the next run sends nothing, and the status document says so (the origin only).
  await engine.sweep(undefined);
  expect(hooks.deliveries).toHaveLength(1);
  const state = await engine.get(outcome.state.id);
  expect(statusDocument(state!, appBase).notifications).toEqual([
    {
      targetOrigin: hooks.origin,
      eventId: delivery!.headers['webhook-id'],
      state: 'delivered',
      attempts: 1,
      nextAttemptTime: null,
      lastError: null,
      deliveredTime: expect.any(String),
    },
  ]);
  expect(JSON.stringify(statusDocument(state!, appBase))).not.toContain('/hooks/gateway');
});

it('tells NOTIFY_URL of every orchestration as well, each target with its own event', async () => {
  const starter = await receiver();
  const operator = await receiver();
  engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, { notifyUrl: operator.url });
  await engine.start(groupStart([starter.url]), finishedAtOnce);
  await engine.start(groupStart(), finishedAtOnce);
  await engine.sweep(undefined);
  expect(starter.deliveries).toHaveLength(1);
  expect(operator.deliveries).toHaveLength(2);
  expect(new Set([...starter.deliveries, ...operator.deliveries].map((delivery) => delivery.headers['webhook-id'])).size).toBe(3);
});

it('retries what may pass with back-off, with the same event id, until delivered', async () => {
  const hooks = await receiver((attempt) => ({ status: attempt < 3 ? 503 : 200 }));
  const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
  await engine.sweep(undefined);
  await engine.sweep(undefined);
  expect(hooks.deliveries).toHaveLength(1);
  clock += 1000;
  await engine.sweep(undefined);
  clock += 1000;
  await engine.sweep(undefined);
  expect(hooks.deliveries).toHaveLength(2);
  clock += 2000;
  await engine.sweep(undefined);
  expect(hooks.deliveries.map((delivery) => delivery.headers['webhook-id'])).toEqual(Array(3).fill(hooks.deliveries[0]!.headers['webhook-id']));
  expect(hooks.deliveries.every((delivery) => delivery.verified)).toBe(true);
  expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ state: 'delivered', attempts: 3 }]);
});

it.each<[string, ScriptedReply, string]>([
  ['a refusal (400)', { status: 400 }, 'HTTP 400'],
  ['a redirect, which is not followed', { status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } }, 'HTTP 302 (redirects are not followed)'],
])('gives up at once on %s', async (_title, reply, error) => {
  const hooks = await receiver(() => reply);
  const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
  await engine.sweep(undefined);
  clock += 60_000;
  await engine.sweep(undefined);
  expect(hooks.deliveries).toHaveLength(1);
  expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ state: 'failed', attempts: 1, lastError: error }]);
});

it('gives up after NOTIFY_MAX_ATTEMPTS, and a receiver that does not answer in time is one attempt', async () => {
  const hooks = await receiver(() => ({ status: 200, delayMs: 1500 }));
  engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, { timeoutMs: 300, maxAttempts: 3 });
  const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
  for (let run = 0; run < 5; run += 1) {
    await engine.sweep(undefined);
    clock += 10_000;
  }
  expect(hooks.deliveries).toHaveLength(3);
  expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ state: 'failed', attempts: 3, lastError: 'timeout' }]);
});

it('delivers after a crash between the end and the delivery, and after one in the middle of a delivery', async () => {
  const container = `n${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const hooks = await receiver((attempt) => ({ status: 200, delayMs: attempt === 1 ? 1500 : 0 }));
  const first = makeEngine(container);
  // The instance that ended it dies before any delivery: another one delivers.
  const ended = await first.start(groupStart([hooks.url]), finishedAtOnce);
  const other = makeEngine(container);
  // The first attempt is claimed and sent, then its instance "dies" (never records it).
  const abandoned = first.deliver(ended.state.id);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(hooks.deliveries).toHaveLength(1);
  expect(await other.sweep(undefined)).toMatchObject({ delivered: 0 });
  clock += 5000; // past the claim
  expect(await other.sweep(undefined)).toMatchObject({ delivered: 1 });
  await abandoned;
  // At least once: the receiver saw the same event twice, and can drop the repeat by its id.
  expect(hooks.deliveries.map((delivery) => delivery.headers['webhook-id'])).toEqual([
    hooks.deliveries[0]!.headers['webhook-id'],
    hooks.deliveries[0]!.headers['webhook-id'],
  ]);
  expect((await other.get(ended.state.id))?.deliveries).toMatchObject([{ state: 'delivered' }]);
});

it('drops a delivery whose origin left NOTIFY_ALLOWED_ORIGINS after the start, and shows it dropped', async () => {
  const container = `n${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const removed = await receiver((attempt) => ({ status: attempt === 1 ? 503 : 204 }));
  const operator = await receiver();
  const before = makeEngine(container, { notifyUrl: operator.url });
  const fresh = await before.start(groupStart([removed.url]), finishedAtOnce);
  const retried = await before.start(groupStart([removed.url]), finishedAtOnce);
  // One delivery was attempted once (503, a retry pending); the other not yet.
  await before.deliver(retried.state.id);
  expect(removed.deliveries).toHaveLength(1);

  // The operator removes the origin and the app restarts with the new setting (NOTIFY_URL's origin
  // needs no entry: the operator named it).
  const after = makeEngine(container, { notifyUrl: operator.url, allowedOrigins: [] });
  clock += 60_000;
  await after.sweep(undefined);
  clock += 60_000;
  await after.sweep(undefined);
  expect(removed.deliveries).toHaveLength(1);
  expect(operator.deliveries).toHaveLength(2);
  for (const [outcome, attempts] of [
    [fresh, 0],
    [retried, 1],
  ] as const) {
    const notifications = statusDocument((await after.get(outcome.state.id))!, appBase).notifications;
    expect(notifications).toEqual([
      expect.objectContaining({ targetOrigin: removed.origin, state: 'dropped', attempts, nextAttemptTime: null, lastError: 'origin no longer allowed' }),
      expect.objectContaining({ targetOrigin: operator.origin, state: 'delivered' }),
    ]);
    // Dropped is final: nothing is left to deliver, so it may be purged.
    expect(await after.purge(outcome.state.id)).toBe('purged');
  }
});

it('never sends a token, and never goes where a redirect points', async () => {
  const hits: string[] = [];
  const elsewhere: Server = createServer((request, response) => {
    hits.push(request.url ?? '');
    response.writeHead(200).end();
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/stolen`;
  const hooks = await receiver(() => ({ status: 307, headers: { location: target } }));
  await engine.start(groupStart([hooks.url]), finishedAtOnce);
  await engine.sweep(undefined);
  await new Promise((resolve) => elsewhere.close(resolve));
  expect(hooks.deliveries).toHaveLength(1);
  expect(hits).toEqual([]);
  expect(logs.join('\n')).not.toContain('/hooks/gateway');
});

describe('bounds', () => {
  it('counts every attempt of a run, and starts no new delivery past the housekeeping budget', async () => {
    const hooks = await receiver();
    const container = `n${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const quick = makeEngine(container);
    for (let index = 0; index < 20; index += 1) await quick.start(groupStart([hooks.url]), finishedAtOnce);
    expect(await quick.sweep(undefined)).toMatchObject({ delivered: 20 });

    // A receiver that never answers in time: a run stops starting deliveries once its budget is spent.
    const silent = await receiver(() => ({ status: 200, delayMs: 1500 }));
    const slow = engineOnContainer(BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(container), {
      storageTimeoutMs: 5000,
      upstream: new UpstreamClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
      deliveries: deliveriesOf({ notifier: new NotificationSender({ signingSecret: secret, timeoutMs: 800 }) }),
      settings: { ...defaultOrchestrationSettings, allowedOrigins, concurrency: 4, housekeepingBudgetMs: 300 },
      // The budget is time: this engine reads the real clock.
      now: Date.now,
      log: () => undefined,
    });
    for (let index = 0; index < 12; index += 1) await slow.start(groupStart([silent.url]), finishedAtOnce);
    await slow.sweep(undefined);
    expect(silent.deliveries.length).toBeGreaterThan(0);
    expect(silent.deliveries.length).toBeLessThan(12);
  });

  it(`keeps at most ${defaultOrchestrationSettings.maxNotifyTargets} targets, however many duplicate starts add theirs`, async () => {
    const accepted = async (): Promise<UpstreamResponse> => ({
      status: 202,
      headers: { location: 'http://127.0.0.1:9/operations/1' },
      bodyText: '',
      attempts: 1,
    });
    const start = groupStart(['http://127.0.0.1:9/first']);
    const first = await engine.start(start, accepted);
    for (let index = 0; index < 15; index += 1) {
      await engine.start({ ...start, notifyTargets: [`http://127.0.0.1:9/duplicate-${index}`] }, accepted);
    }
    expect((await engine.get(first.state.id))?.notifyTargets).toHaveLength(defaultOrchestrationSettings.maxNotifyTargets);
  });

  it('does not purge an orchestration whose notifications are still to be delivered', async () => {
    const hooks = await receiver(() => ({ status: 503 }));
    const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
    await engine.sweep(undefined);
    expect(await engine.purge(outcome.state.id)).toBe('notifying');
    const byFilter = await engine.purgeMatching({ statuses: ['Completed'] }, { top: 100, maxScanned: 1000, timeBudgetMs: 5000 });
    expect(byFilter.instancesDeleted).toBe(0);
    expect(await engine.get(outcome.state.id)).toBeDefined();
  });

  /** A receiver down until `up` is set, and an engine keeping ended orchestrations one minute. */
  async function retentionCase(settings: Partial<OrchestrationSettings>) {
    const switchable = { up: false };
    const hooks = await receiver(() => ({ status: switchable.up ? 204 : 503 }));
    const container = `n${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const retained = makeEngine(container, { settings: { retentionMs: 60_000, ...settings } });
    const outcome = await retained.start(groupStart([hooks.url]), finishedAtOnce);
    await retained.sweep(undefined); // the first attempt: 503
    const eventIds = () => hooks.deliveries.map((delivery) => delivery.headers['webhook-id']);
    return {
      switchable,
      retained,
      id: outcome.state.id,
      eventIds,
      container: BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(container),
    };
  }

  it('keeps an orchestration past its retention while its notification is pending, and purges it once delivered', async () => {
    // The janitor's next turn is a day away: the purge here is the sweep's.
    const { switchable, retained, id, eventIds } = await retentionCase({ janitorIntervalMs: 24 * 3600_000 });
    clock += 61_000; // the retention ends with the receiver still down
    await retained.sweep(undefined);
    await retained.sweep(undefined);
    expect(await retained.get(id)).toMatchObject({ deliveries: [{ state: 'pending', attempts: 2 }] });
    switchable.up = true;
    clock += 60_000;
    await retained.sweep(undefined);
    await retained.sweep(undefined);
    expect(eventIds()).toEqual(Array(3).fill(eventIds()[0]));
    expect(await retained.get(id)).toBeUndefined();
  });

  it('is not purged by the janitor past its retention while its notification is pending', async () => {
    const { switchable, retained, id, eventIds, container } = await retentionCase({ janitorIntervalMs: 60 * 60_000 });
    // Stored as before the index existed: no expiry marker, so only the janitor purges it.
    for await (const blob of container.listBlobsFlat({ prefix: 'expiry/' })) await container.deleteBlob(blob.name);
    clock += 61 * 60_000; // past the retention and the janitor's interval, the receiver still down
    expect(await retained.sweep(undefined)).toMatchObject({ janitorScanned: 1 });
    expect(await retained.get(id)).toMatchObject({ deliveries: [{ state: 'pending', attempts: 2 }] });
    switchable.up = true;
    clock += 60_000;
    await retained.sweep(undefined);
    expect(eventIds()).toEqual(Array(3).fill(eventIds()[0]));
    clock += 61 * 60_000; // the janitor's next turn: delivered now, it goes
    await retained.sweep(undefined);
    expect(await retained.get(id)).toBeUndefined();
  });
});

describe('a receiver that accepts and never answers', () => {
  it('delays neither the other receivers nor the poller run', async () => {
    const dark = await darkReceiver();
    const healthy = await receiver();
    // The dark receiver's attempts outlast the run by far: a run that waited for them would be seen.
    engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, { timeoutMs: 10_000, settings: { deliveryWaitMs: 3000 } });
    const darkIds: string[] = [];
    for (let index = 0; index < 24; index += 1) darkIds.push((await engine.start(groupStart([dark.url]), finishedAtOnce)).state.id);
    // The healthy receiver's events fell due last, behind all of the dark one's.
    clock += 1000;
    for (let index = 0; index < 3; index += 1) await engine.start(groupStart([healthy.url]), finishedAtOnce);

    const run = await engine.sweep(undefined);
    // All the healthy events arrived, and the run ended, before any dark attempt timed out.
    expect(healthy.deliveries).toHaveLength(3);
    for (const delivery of healthy.deliveries) {
      expect(delivery.verified).toBe(true);
      expect(delivery.body).not.toContain('not-for-receivers-8841');
      expect(delivery.body).not.toContain(secret.replace(/^whsec_/, ''));
    }
    const darkDeliveries = (await Promise.all(darkIds.map((id) => engine.get(id)))).flatMap((state) => state?.deliveries ?? []);
    expect(darkDeliveries.filter((delivery) => delivery.attempts > 0)).toEqual([]);
    // The dark receiver holds only its own share of the places.
    expect(dark.eventIds).toHaveLength(defaultOrchestrationSettings.originGate.perOriginConcurrency);
    expect(run.delivered).toBe(3 + defaultOrchestrationSettings.originGate.perOriginConcurrency);

    // Its attempts end after the run, and are recorded then: retries due, nothing lost.
    await engine.deliveriesSettled();
    const attempted = (await Promise.all(darkIds.map((id) => engine.get(id))))
      .flatMap((state) => state?.deliveries ?? [])
      .filter((delivery) => delivery.attempts > 0);
    expect(attempted).toHaveLength(dark.eventIds.length);
    expect(attempted).toEqual(attempted.map(() => expect.objectContaining({ state: 'pending', lastError: 'timeout', nextAttemptAt: expect.any(Number) })));
    expect(logs.join('\n')).not.toContain('/hooks/dark');
  }, 60_000);

  it('starts the deliveries due even when a run waits for none of them', async () => {
    const hooks = await receiver();
    engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, { settings: { deliveryWaitMs: 0 } });
    const outcome = await engine.start(groupStart([hooks.url]), finishedAtOnce);
    expect(await engine.sweep(undefined)).toMatchObject({ delivered: 1 });
    await engine.deliveriesSettled();
    expect(hooks.deliveries).toHaveLength(1);
    expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ state: 'delivered', attempts: 1 }]);
  });

  it('leaves first attempts places that retries cannot take', async () => {
    // Four receivers that fail fast once, then hang: their retries would hold every place.
    const flaky = await Promise.all([1, 2, 3, 4].map(() => receiver((attempt) => (attempt === 1 ? { status: 503 } : { status: 204, delayMs: 60_000 }))));
    const healthy = await receiver();
    engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, { timeoutMs: 5000, settings: { concurrency: 4, deliveryWaitMs: 300 } });
    for (const each of flaky) await engine.start(groupStart([each.url]), finishedAtOnce);
    expect(await engine.sweep(undefined)).toMatchObject({ delivered: 4 });
    await engine.deliveriesSettled();
    clock += 1000;
    // Retries take at most half of the places...
    expect(await engine.sweep(undefined)).toMatchObject({ delivered: 2 });
    // ...so a first attempt falling due while they hang still goes at once.
    await engine.start(groupStart([healthy.url]), finishedAtOnce);
    expect(await engine.sweep(undefined)).toMatchObject({ delivered: 1 });
    await engine.deliveriesSettled();
    expect(healthy.deliveries).toHaveLength(1);
  }, 60_000);

  it('is skipped while its circuit is open, probed after the cool-down, and each delivery ends failed: none is lost', async () => {
    const dark = await darkReceiver();
    const coolDownMs = 60_000;
    engine = makeEngine(`n${randomUUID().replaceAll('-', '').slice(0, 20)}`, {
      timeoutMs: 500,
      maxAttempts: 2,
      settings: { originGate: { perOriginConcurrency: 2, failuresToOpen: 2, coolDownMs } },
    });
    const ids: string[] = [];
    for (let index = 0; index < 6; index += 1) ids.push((await engine.start(groupStart([dark.url]), finishedAtOnce)).state.id);
    const deliveries = async () => (await Promise.all(ids.map((id) => engine.get(id)))).flatMap((state) => state?.deliveries ?? []);

    // Two attempts at once, both unanswered: the circuit opens (a third may start between the two
    // failures), and the others wait, unsent.
    await engine.sweep(undefined);
    const beforeOpen = dark.eventIds.length;
    expect(beforeOpen).toBeGreaterThanOrEqual(2);
    expect(beforeOpen).toBeLessThanOrEqual(3);
    clock += 5000;
    await engine.sweep(undefined);
    expect(dark.eventIds).toHaveLength(beforeOpen);
    expect((await deliveries()).filter((delivery) => delivery.state === 'pending')).toHaveLength(6);

    // After each cool-down one attempt probes it; every delivery gets its attempts, then fails.
    for (let run = 0; run < 30 && (await deliveries()).some((delivery) => delivery.state === 'pending'); run += 1) {
      clock += coolDownMs;
      await engine.sweep(undefined);
    }
    const ended = await deliveries();
    expect(ended).toEqual(ended.map(() => expect.objectContaining({ state: 'failed', attempts: 2, lastError: 'timeout' })));
    expect([...dark.eventIds].sort()).toEqual(ended.flatMap((delivery) => [delivery.eventId, delivery.eventId]).sort());
  }, 90_000);
});
