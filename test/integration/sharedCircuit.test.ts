/**
 * The receivers' circuits shared by the app's instances (orchestration/sharedCircuit.ts,
 * circuitRecords.ts) on Azurite: several engines on one container stand for the instances, a
 * clock the test moves for their cool-downs. A receiver one instance found dark is held open by
 * every other from its next run, probed once per cool-down by all of them together (the one whose
 * conditional write wins), and closed for all by one answered probe; what that costs in storage
 * requests; the janitor removing a record nobody probed; and each instance on its own gate while
 * the records' storage stalls.
 */
import { randomBytes } from 'node:crypto';
import { CircuitRecords } from '../../src/notifications/circuitRecords';
import type { ContainerClient } from '@azure/storage-blob';
import { deliveriesOf } from '../../src/notifications/notificationDispatcher';
import { NotificationSender } from '../../src/notifications/notificationSender';
import { defaultOrchestrationSettings, engineOnContainer, type OrchestrationEngine } from '../../src/orchestration/orchestrationEngine';
import { StorageBudget } from '../../src/storage/storageBudget';
import { countingStorage, type Stall } from '../../tools/harness/countingStorage';
import { blobNames, finishedAtOnce, groupStart, retentionMs, upstreamOf, useEngineFixture } from '../helpers/engineFixture';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';

const fx = useEngineFixture();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const coolDownMs = 60_000;
const failuresToOpen = 2;
const staleAfterMs = 15 * 60_000;
/** What the receiver answers: 503 while dark; once `answerAfter` settles, when set. */
const receiverState: { status: number; answerAfter?: Promise<void> } = { status: 503 };
let receiver: WebhookReceiver;
const logs: string[] = [];
const engines: OrchestrationEngine[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret, () => ({ status: receiverState.status, answerAfter: receiverState.answerAfter }));
});
afterAll(async () => {
  await Promise.all(engines.map((engine) => engine.deliveriesSettled()));
  await receiver.close();
});
beforeEach(() => {
  receiverState.status = 503;
  receiverState.answerAfter = undefined;
  receiver.deliveries.splice(0);
  logs.splice(0);
});

const circuitsOf = (container: ContainerClient, storageTimeoutMs = 5000) =>
  new CircuitRecords(container, new StorageBudget(storageTimeoutMs, 'Receiver circuits'), staleAfterMs);

/** One instance: an engine on the test's container, sharing circuits unless `shared` is false. */
function instance(
  options: { shared?: boolean; stall?: (line: string) => Stall | undefined; storageTimeoutMs?: number; deliveryWaitMs?: number } = {},
): OrchestrationEngine {
  const storage = options.stall ? countingStorage(fx.azurite.connectionString, () => 0, options.stall) : fx.storage;
  const container = storage.service.getContainerClient(fx.container);
  const circuits = options.shared === false ? undefined : circuitsOf(container, options.storageTimeoutMs);
  const made = engineOnContainer(container, {
    storageTimeoutMs: 5000,
    upstream: upstreamOf(fx),
    deliveries: deliveriesOf({ notifier: new NotificationSender({ signingSecret: secret, timeoutMs: 2000 }), circuits }),
    staleRecords: circuits,
    settings: {
      ...defaultOrchestrationSettings,
      retentionMs,
      allowedOrigins: [receiver.origin],
      outbox: { maxAttempts: 50, firstRetryMs: 1000, maxRetryMs: 10_000, claimMs: 5000 },
      originGate: { perOriginConcurrency: 1, failuresToOpen, coolDownMs },
      deliveryWaitMs: options.deliveryWaitMs ?? 30_000,
    },
    now: () => fx.clock,
    log: (line) => logs.push(line),
  });
  engines.push(made);
  return made;
}

/** `count` orchestrations ended at once, each to tell the receiver. */
async function endedNotifying(engine: OrchestrationEngine, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) await engine.start({ ...groupStart(fx, `dark-${index}`), notifyTargets: [receiver.url] }, finishedAtOnce);
}

const attempts = () => receiver.deliveries.length;
const circuitRecords = () => blobNames(fx, 'circuit/');

describe.each([2, 4])('%i instances and a receiver gone dark', (count) => {
  it('probe it once per cool-down together, and one answered probe closes it for all', async () => {
    const instances = Array.from({ length: count }, () => instance());
    await endedNotifying(instances[0]!, 30);

    // The first instance's attempts open its circuit and record it app-wide.
    await instances[0]!.sweep(undefined);
    expect(attempts()).toBe(failuresToOpen);
    expect(await circuitRecords()).toHaveLength(1);
    // Every other instance holds it open from its next run: no attempt.
    for (const other of instances.slice(1)) await other.sweep(undefined);
    expect(attempts()).toBe(failuresToOpen);

    // Each cool-down, the instances all run at once: one probe in all.
    for (let round = 1; round <= 3; round += 1) {
      fx.clock += coolDownMs;
      await Promise.all(instances.map((each) => each.sweep(undefined)));
      expect(attempts()).toBe(failuresToOpen + round);
      // And runs within the cool-down make none.
      fx.clock += 5000;
      await Promise.all(instances.map((each) => each.sweep(undefined)));
      expect(attempts()).toBe(failuresToOpen + round);
    }

    // The receiver answers again: the next probe closes the circuit for every instance (the
    // prober goes on with the deliveries its run holds), and every delivery is made.
    receiverState.status = 204;
    fx.clock += coolDownMs;
    await Promise.all(instances.map((each) => each.sweep(undefined)));
    expect(receiver.deliveries.filter((_delivery, index) => index >= failuresToOpen + 3).length).toBeGreaterThanOrEqual(1);
    expect(await circuitRecords()).toEqual([]);
    for (let run = 0; run < 10 && receiver.deliveries.length < failuresToOpen + 3 + 30; run += 1) {
      fx.clock += 5000;
      await Promise.all(instances.map((each) => each.sweep(undefined)));
    }
    expect(new Set(receiver.deliveries.slice(failuresToOpen + 3).map((delivery) => delivery.headers['webhook-id'])).size).toBe(30);
  }, 60_000);

  it('are each probed once per cool-down by every instance without the shared record (as before)', async () => {
    const instances = Array.from({ length: count }, () => instance({ shared: false }));
    await endedNotifying(instances[0]!, 30);
    for (const each of instances) await each.sweep(undefined);
    expect(attempts()).toBe(count * failuresToOpen);
    fx.clock += coolDownMs;
    await Promise.all(instances.map((each) => each.sweep(undefined)));
    expect(attempts()).toBe(count * failuresToOpen + count);
  }, 60_000);
});

describe('a slow probe', () => {
  it('answered after the next run started closes the circuit for all all the same', async () => {
    // The run does not wait for the probe's answer: it comes after the next run started.
    const engine = instance({ deliveryWaitMs: 1 });
    await endedNotifying(engine, 1);
    // Another instance found the receiver dark, and its cool-down is over.
    const records = new CircuitRecords(fx.storage.service.getContainerClient(fx.container), new StorageBudget(5000, 'Receiver circuits'), staleAfterMs);
    expect(await records.open(receiver.origin, fx.clock)).toEqual(expect.any(String));
    let answer = () => undefined as void;
    receiverState.answerAfter = new Promise<void>((resolve) => (answer = resolve));
    receiverState.status = 204;
    // Run 1 takes the probe and sends it; run 2 starts (the delivery is claimed: nothing is due).
    await engine.sweep(undefined);
    fx.clock += 1000;
    await engine.sweep(undefined);
    expect(await circuitRecords()).toHaveLength(1);
    answer();
    await engine.deliveriesSettled();
    expect(attempts()).toBe(1);
    expect(await circuitRecords()).toEqual([]);
  });
});

describe('the cost in storage requests', () => {
  it('one read of the record per origin with deliveries due in a run; a write to open it, to take a probe, to close it', async () => {
    const [first, second] = [instance(), instance()];
    await endedNotifying(first, 6);
    const circuitRequests = () => fx.storage.requests.filter((line) => line.includes('/circuit/'));
    fx.storage.reset();
    await first.sweep(undefined);
    // Closed (no record: 404), then opened by this run's failures: a HEAD and a create.
    expect(circuitRequests()).toEqual([expect.stringMatching(/^HEAD /), expect.stringMatching(/^PUT /)]);
    fx.storage.reset();
    await second.sweep(undefined);
    // Held open: one HEAD, nothing else.
    expect(circuitRequests()).toEqual([expect.stringMatching(/^HEAD /)]);
    fx.storage.reset();
    fx.clock += coolDownMs;
    receiverState.status = 204;
    await second.sweep(undefined);
    // The probe taken (a conditional replace), answered, the record removed (a conditional delete).
    expect(circuitRequests()).toEqual([expect.stringMatching(/^HEAD /), expect.stringMatching(/^PUT /), expect.stringMatching(/^DELETE /)]);
    console.log(`shared circuit: storage requests per run and origin: held open 1, probe taken 2, closed by the probe 3`);
  });
});

describe('the janitor', () => {
  it('removes on its turn a record nobody probed past its next probe time and the stale time, and keeps a live one', async () => {
    const engine = instance();
    const records = new CircuitRecords(fx.storage.service.getContainerClient(fx.container), new StorageBudget(5000, 'Receiver circuits'), staleAfterMs);
    // The janitor's first turn; the next is an interval on.
    await engine.sweep(undefined);
    const { janitorIntervalMs } = defaultOrchestrationSettings;
    expect(await records.open('https://gone.example.com', fx.clock)).toEqual(expect.any(String));
    expect(await records.open('https://down.example.com', fx.clock + janitorIntervalMs)).toEqual(expect.any(String));
    // Opened once: a second open finds it there.
    expect(await records.open('https://gone.example.com', fx.clock)).toBeUndefined();
    fx.clock += janitorIntervalMs;
    await engine.sweep(undefined);
    expect(await records.read('https://gone.example.com')).toBeUndefined();
    expect(await records.read('https://down.example.com')).toBeDefined();
    // Its next probe time passed by the stale time and more: the turn after that removes it.
    fx.clock += Math.max(janitorIntervalMs, staleAfterMs + 1);
    await engine.sweep(undefined);
    expect(await circuitRecords()).toEqual([]);
  });
});

describe('storage that stalls', () => {
  it('leaves each instance on its own gate, said once in the log, tried again once a cool-down, and the deliveries go on', async () => {
    let tried = 0;
    const stall = (line: string): Stall | undefined => (line.includes('/circuit/') ? ((tried += 1), 'request') : undefined);
    const stalled = instance({ stall, storageTimeoutMs: 300 });
    await endedNotifying(stalled, 6);
    await stalled.sweep(undefined);
    // Its own circuit opened after its failures, as before the record existed; after the failed
    // read, the record it would open is not tried.
    expect(attempts()).toBe(failuresToOpen);
    expect(tried).toBe(1);
    fx.clock += 5000;
    await stalled.sweep(undefined);
    expect(attempts()).toBe(failuresToOpen);
    // Within a cool-down of the failure the run does not wait on storage before its deliveries.
    expect(tried).toBe(1);
    fx.clock += coolDownMs;
    await stalled.sweep(undefined);
    expect(attempts()).toBe(failuresToOpen + 1);
    expect(tried).toBe(2);
    expect(logs.filter((line) => line.includes('"subject":"receiver circuits","state":"down"'))).toHaveLength(1);
    // Still stalled: not back.
    expect(logs.filter((line) => line.includes('"state":"back"'))).toEqual([]);
    expect(await circuitRecords()).toEqual([]);
  }, 60_000);
});
