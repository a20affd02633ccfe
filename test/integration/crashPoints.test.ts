/**
 * Every crash point of the engine's paths, tried: each path (start, a repeated start joining,
 * polls to the end with its notification, hold, approve, reject, the held send, terminate,
 * purge) runs once on an instance that never stops, counting its storage writes and upstream
 * calls; then once per crash point on an instance that stops right after its k-th write (or
 * right after the upstream answered its j-th call): every later request it would make fails, as
 * a process killed there would make none, and its memory is dropped. A fresh instance on the same
 * storage then works it off with a clock moved past every recovery bound, and the invariants the
 * engine promises are checked (docs/architecture.md, "Guarantees"):
 *
 * - a start is sent upstream at most once;
 * - everything accepted ends, exactly once (one end notification event, delivered at least once
 *   with the same id), and nothing is left Pending or Running or holding a key;
 * - `Completed` means the upstream took the start and said it succeeded;
 * - the list agrees with the documents.
 *
 * A new storage write in a path is a new crash point without any change here: the points are
 * counted from the path's own run. The count of points per path is printed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Approvals } from '../../src/approvals/approvals';
import { approvalHolds, waitingApproval } from '../../src/approvals/approvalTransitions';
import { ApprovalWaits } from '../../src/approvals/approvalWaits';
import { deliveriesOf } from '../../src/notifications/notificationDispatcher';
import { NotificationSender } from '../../src/notifications/notificationSender';
import { defaultOrchestrationSettings, engineOnContainer, type OrchestrationEngine, type StartRequest } from '../../src/orchestration/orchestrationEngine';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import { StorageBudget } from '../../src/storage/storageBudget';
import { UpstreamClient, type UpstreamRequest, type UpstreamResponse } from '../../src/upstream/upstreamClient';
import { countingStorage, type CountingStorage } from '../../tools/harness/countingStorage';
import { blobNames, groupStart, token, useEngineFixture } from '../helpers/engineFixture';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';

jest.setTimeout(600_000);

const fixture = useEngineFixture();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const minute = 60_000;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
});
afterAll(async () => {
  await receiver.close();
});

/** Where an instance stops: right after its k-th storage write, or right after the upstream answered its j-th call. */
type CrashPoint = { afterWrite: number } | { afterUpstreamCall: number } | undefined;

/** An instance of the app: its engine and approvals, on storage and an upstream that stop answering it at its crash point. */
interface Instance {
  engine: OrchestrationEngine;
  upstream: UpstreamClient;
  approvals: Approvals;
  writes: number;
  upstreamCalls: number;
  stopped: boolean;
}

const stoppedError = () => Object.assign(new Error('The instance stopped.'), { name: 'InstanceStopped' });

function instance(crash: CrashPoint = undefined): Instance {
  const state: Instance = { writes: 0, upstreamCalls: 0, stopped: false } as Instance;
  const storage: CountingStorage = countingStorage(fixture.azurite.connectionString, (line) => {
    if (state.stopped) return Promise.reject(stoppedError());
    if (line.startsWith('PUT') || line.startsWith('DELETE')) {
      state.writes += 1;
      // The k-th write lands; nothing after it does.
      if (crash && 'afterWrite' in crash && state.writes === crash.afterWrite) queueMicrotask(() => (state.stopped = true));
    }
    return 0;
  });
  class StoppingUpstream extends UpstreamClient {
    override async send(request: UpstreamRequest): Promise<UpstreamResponse> {
      if (state.stopped) throw stoppedError();
      const answer = await super.send(request);
      state.upstreamCalls += 1;
      if (crash && 'afterUpstreamCall' in crash && state.upstreamCalls === crash.afterUpstreamCall) state.stopped = true;
      if (state.stopped) throw stoppedError();
      return answer;
    }
  }
  const container = storage.service.getContainerClient(fixture.container);
  const waits = new ApprovalWaits(container, new StorageBudget(5000, 'Orchestration storage'));
  const now = () => fixture.clock;
  state.upstream = new StoppingUpstream({ baseUrl: fixture.emulator.url, timeoutMs: 2000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
  state.engine = engineOnContainer(container, {
    storageTimeoutMs: 5000,
    upstream: state.upstream,
    deliveries: deliveriesOf({ notifier: new NotificationSender({ signingSecret: secret, timeoutMs: 2000 }) }),
    holds: approvalHolds(waits),
    settings: {
      ...defaultOrchestrationSettings,
      pollInterval: { defaultMs: 1000, floorMs: 1000, ceilingMs: 5000 },
      deadlineMs: {},
      defaultDeadlineMs: 30 * minute,
      retentionMs: 24 * 60 * minute,
      notifyUrl: `${receiver.origin}/ends`,
      allowedOrigins: [receiver.origin],
    },
    now,
    log: () => undefined,
  });
  state.approvals = new Approvals(state.engine, waits, now);
  return state;
}

const approvers = ['key:approver0001'];
const starter = { primary: 'key:starter00001', selectors: ['key:starter00001'] };

function startOf(name: string): StartRequest {
  return { ...groupStart(fixture, name), startedBy: starter.primary, duplicatesPerCaller: true };
}

/** A start's send, through the instance's own upstream client (which stops with it). */
const sendOf = (at: Instance, start: StartRequest) => () =>
  at.upstream.send({
    method: start.method,
    url: start.resourceUrl,
    token,
    body: start.bodyText,
    headers: { 'content-type': 'application/json' },
  });

const held = (start: StartRequest) => ({ url: start.resourceUrl, headers: { 'content-type': 'application/json' }, bodyText: start.bodyText });
const holdOn = (at: Instance, start: StartRequest) =>
  at.approvals.hold(start, held(start), waitingApproval(1, approvers, fixture.clock + 60 * minute, starter), { perCaller: 50, total: 500 });

interface Path {
  /** What exists before the path runs, made by an instance that never stops. */
  setup(name: string): Promise<{ id?: string; start: StartRequest }>;
  /** The path itself, on the instance that may stop. */
  act(at: Instance, context: { id?: string; start: StartRequest }): Promise<unknown>;
}

const paths: Record<string, Path> = {
  start: {
    setup: async (name) => ({ start: startOf(name) }),
    act: (at, { start }) => at.engine.start(start, sendOf(at, start)),
  },
  'repeated start (joins)': {
    setup: async (name) => {
      const start = startOf(name);
      const healthy = instance();
      const outcome = await healthy.engine.start(start, sendOf(healthy, start));
      return { id: outcome.state.id, start };
    },
    act: (at, { start }) => at.engine.start(start, sendOf(at, start)),
  },
  'polls to the end, and its notification': {
    setup: async (name) => {
      const start = startOf(name);
      const healthy = instance();
      const outcome = await healthy.engine.start(start, sendOf(healthy, start));
      return { id: outcome.state.id, start };
    },
    act: async (at) => {
      for (let run = 0; run < 6; run += 1) {
        fixture.clock += 2000;
        await at.engine.sweep(token);
      }
      await at.engine.deliveriesSettled();
    },
  },
  hold: {
    setup: async (name) => ({ start: startOf(name) }),
    act: (at, { start }) => holdOn(at, start),
  },
  approve: {
    setup: async (name) => {
      const start = startOf(name);
      const outcome = await holdOn(instance(), start);
      return { id: outcome.state.id, start };
    },
    act: (at, { id }) => at.approvals.decide(id!, { by: approvers[0]!, approved: true, route: 'api' }, () => undefined),
  },
  reject: {
    setup: async (name) => {
      const start = startOf(name);
      const outcome = await holdOn(instance(), start);
      return { id: outcome.state.id, start };
    },
    act: (at, { id }) => at.approvals.decide(id!, { by: approvers[0]!, approved: false, reason: 'no', route: 'api' }, () => undefined),
  },
  'held send (the poller sends an approved start)': {
    setup: async (name) => {
      const start = startOf(name);
      const healthy = instance();
      const outcome = await holdOn(healthy, start);
      await healthy.approvals.decide(outcome.state.id, { by: approvers[0]!, approved: true, route: 'api' }, () => undefined);
      return { id: outcome.state.id, start };
    },
    act: (at) => at.engine.sweep(token),
  },
  terminate: {
    setup: async (name) => {
      const start = startOf(name);
      const healthy = instance();
      const outcome = await healthy.engine.start(start, sendOf(healthy, start));
      return { id: outcome.state.id, start };
    },
    act: (at, { id }) => at.engine.terminate(id!, 'by the test'),
  },
  purge: {
    setup: async (name) => {
      const start = startOf(name);
      const healthy = instance();
      const outcome = await healthy.engine.start(start, sendOf(healthy, start));
      await healthy.engine.terminate(outcome.state.id, 'to purge');
      await healthy.engine.deliver(outcome.state.id);
      return { id: outcome.state.id, start };
    },
    act: (at, { id }) => at.engine.purge(id!),
  },
};

async function documents(): Promise<OrchestrationState[]> {
  const healthy = instance();
  const states: OrchestrationState[] = [];
  for (const name of await blobNames(fixture, 'instances/')) {
    const state = await healthy.engine.get(name.slice('instances/'.length, -'.json'.length));
    if (state) states.push(state);
  }
  return states;
}

/** A fresh instance works off what the stopped one left, past every recovery bound: claims, the stale-start wait, approval expiry. */
async function recover(): Promise<void> {
  const healthy = instance();
  for (let run = 0; run < 40; run += 1) {
    fixture.clock += 5 * minute;
    await healthy.engine.sweep(token);
    await healthy.engine.deliveriesSettled();
  }
}

function createSends(start: StartRequest): number {
  return fixture.emulator.upstreamRequests({ method: 'PUT', pathIncludes: start.path.split('/').pop()! }).length;
}

async function checkInvariants(path: string, crash: CrashPoint, start: StartRequest): Promise<void> {
  const where = `${path}, ${JSON.stringify(crash)}`;
  const sends = createSends(start);
  expect({ where, sendsAtMostOnce: sends <= 1 }).toEqual({ where, sendsAtMostOnce: true });
  const states = await documents();
  for (const state of states) {
    expect({ where, id: state.id, status: state.runtimeStatus }).toEqual({
      where,
      id: state.id,
      status: expect.stringMatching(/^(Completed|Failed|Terminated)$/),
    });
    if (state.runtimeStatus === 'Completed') expect({ where, completedSentOnce: sends }).toEqual({ where, completedSentOnce: 1 });
    if (state.failure?.code === 'NotApproved') expect({ where, notApprovedSentNothing: sends }).toEqual({ where, notApprovedSentNothing: 0 });
    // One end, told at least once, with one event id however many attempts carried it.
    const ends = receiver.deliveries.filter((delivery) => delivery.event?.subject === state.id);
    const eventIds = new Set(ends.map((delivery) => delivery.event?.id));
    expect({ where, id: state.id, delivered: ends.length > 0, eventIds: eventIds.size }).toEqual({ where, id: state.id, delivered: true, eventIds: 1 });
  }
  // The index holds no key of anything ended, and the list says what the documents say.
  expect({ where, keys: await blobNames(fixture, 'keys/') }).toEqual({ where, keys: [] });
  const listed = await instance().engine.query({ top: 1000, maxScanned: 10_000, timeBudgetMs: 10_000 });
  expect({ where, listed: listed.summaries.map((summary) => `${summary.id} ${summary.runtimeStatus}`).sort() }).toEqual({
    where,
    listed: states.map((state) => `${state.id} ${state.runtimeStatus}`).sort(),
  });
}

describe.each(Object.entries(paths))('%s', (name, path) => {
  it('keeps every promise whatever write (or upstream answer) the instance stops after', async () => {
    // The path's own run, never stopped, counts its crash points.
    const context = await path.setup(`dry-${randomUUID().slice(0, 8)}`);
    const dry = instance();
    await path.act(dry, context);
    const points: CrashPoint[] = [
      ...Array.from({ length: dry.writes }, (_, index) => ({ afterWrite: index + 1 })),
      ...Array.from({ length: dry.upstreamCalls }, (_, index) => ({ afterUpstreamCall: index + 1 })),
    ];
    console.log(`crash points of "${name}": ${dry.writes} after a storage write, ${dry.upstreamCalls} after an upstream answer`);
    expect(points.length).toBeGreaterThan(0);
    for (const crash of points) {
      fixture.container = `c${randomUUID().replaceAll('-', '').slice(0, 20)}`;
      fixture.emulator.reset();
      receiver.deliveries.splice(0);
      const crashed = await path.setup(`crash-${randomUUID().slice(0, 8)}`);
      const mortal = instance(crash);
      await path.act(mortal, crashed).catch(() => undefined);
      mortal.stopped = true;
      await recover();
      await checkInvariants(name, crash, crashed.start);
    }
  });
});
