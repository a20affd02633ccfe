/**
 * What the orchestration engine costs, counted in storage requests (deterministic, unlike a
 * timing): a poller run costs what is due whatever has ended; a start makes two requests
 * before the upstream call and two after; purges come in bounded batches; the janitor repairs
 * what a crash or an older version left; a continuation token walks a large store once; and a
 * wait is served by another instance's polls without a poll made twice. Against the emulator
 * and Azurite over loopback, with a clock the test moves.
 */
import { randomUUID } from 'node:crypto';
import { defaultOrchestrationSettings, engineOnContainer, type OrchestrationEngine, type StartRequest } from '../../src/orchestration/orchestrationEngine';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import { OrchestrationWatches } from '../../src/orchestration/orchestrationWaiter';
import { ended } from '../../src/orchestration/transitions';
import type { UpstreamResponse } from '../../src/upstream/upstreamClient';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { startEmulator, type Emulator } from '../emulator/emulatorServer';
import { countingStorage, type CountingStorage } from '../helpers/countingStorage';

const token = 'emulator-token';
const subscription = '00000000-0000-0000-0000-000000000000';
const retentionMs = 3600_000;
let emulator: Emulator;
let azurite: RunningAzurite;
let storage: CountingStorage;
let clock = Date.parse('2026-06-01T00:00:00Z');
let container: string;

const upstream = () => new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 2000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });

function makeEngine(now: () => number = () => clock, settings: Partial<typeof defaultOrchestrationSettings> = {}): OrchestrationEngine {
  return engineOnContainer(storage.service.getContainerClient(container), {
    storageTimeoutMs: 5000,
    upstream: upstream(),
    settings: { ...defaultOrchestrationSettings, pollInterval: { defaultMs: 5000, floorMs: 1000, ceilingMs: 60_000 }, deadlineMs: {}, defaultDeadlineMs: 10 * 60_000, retentionMs, ...settings },
    now,
    log: () => undefined,
  });
}

function groupStart(name: string): StartRequest {
  const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}`;
  const body = { location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } };
  return { name: 'ContainerGroups_CreateOrUpdate', method: 'PUT', path, query: [['api-version', '2025-09-01']], bodyText: JSON.stringify(body), bodyValue: body, resourceUrl: `${emulator.url}/${path}?api-version=2025-09-01` };
}

const sendFor = (start: StartRequest) => () => upstream().send({ method: start.method, url: start.resourceUrl, token, body: start.bodyText, headers: { 'content-type': 'application/json' } });
/** An upstream that finished at once: the orchestration ends with the start. */
const finishedAtOnce = async (): Promise<UpstreamResponse> => ({ status: 200, headers: {}, bodyText: '{"properties":{"provisioningState":"Succeeded"}}', attempts: 1 });

async function endedOrchestrations(engine: OrchestrationEngine, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let batch = 0; batch < count; batch += 20) {
    const outcomes = await Promise.all(Array.from({ length: Math.min(20, count - batch) }, (_, index) => engine.start(groupStart(`done-${batch + index}-${randomUUID().slice(0, 6)}`), finishedAtOnce)));
    ids.push(...outcomes.map((outcome) => outcome.state.id));
  }
  return ids;
}

async function blobNames(prefix = ''): Promise<string[]> {
  const names: string[] = [];
  for await (const blob of storage.service.getContainerClient(container).listBlobsFlat({ prefix })) names.push(blob.name);
  return names;
}

beforeAll(async () => {
  emulator = await startEmulator({ token, lroSteps: 2, retryAfterSeconds: 1 });
  azurite = await startAzurite();
  storage = countingStorage(azurite.connectionString);
});
afterAll(async () => {
  await emulator.close();
  await azurite.close();
});
beforeEach(() => {
  emulator.reset();
  container = `i${randomUUID().replaceAll('-', '').slice(0, 20)}`;
});

describe('a poller run costs what is due, not what is stored', () => {
  it('makes the same storage requests with 0 and with 200 ended orchestrations stored', async () => {
    const engine = makeEngine();
    for (const name of ['running-a', 'running-b']) await engine.start(groupStart(name), sendFor(groupStart(name)));
    await engine.sweep(token); // the janitor takes its first turn, and then waits an hour
    storage.reset();
    await engine.sweep(token);
    const withNoneEnded = [...storage.requests];

    await endedOrchestrations(engine, 200);
    storage.reset();
    const result = await engine.sweep(token);
    expect(storage.requests).toEqual(withNoneEnded);
    expect(result).toMatchObject({ due: 0, polled: 0, purged: 0 });
    // Listing what runs, what has deliveries due, the expiry buckets, and the janitor's cursor.
    expect(withNoneEnded.length).toBeLessThanOrEqual(5);
  }, 60_000);

  it('reads the documents of due orchestrations only', async () => {
    const engine = makeEngine();
    await endedOrchestrations(engine, 40);
    // Started by another instance: this one holds no version of it, so it reads it.
    const started = await makeEngine().start(groupStart('due-now'), sendFor(groupStart('due-now')));
    await engine.sweep(token);
    clock += 2000;
    storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    const documentReads = storage.requests.filter((line) => line.startsWith('GET') && line.includes('/instances/'));
    expect(documentReads).toEqual([`GET ${container}/instances/${started.state.id}.json`]);
  });
});

it('a start makes two storage requests before the upstream call and two after, and none twice', async () => {
  const engine = makeEngine();
  await engine.start(groupStart('warm-up'), sendFor(groupStart('warm-up'))); // creates the container
  storage.reset();
  let beforeUpstream: string[] = [];
  const start = groupStart('counted');
  await engine.start(start, async () => {
    beforeUpstream = [...storage.requests];
    return sendFor(start)();
  });
  const afterUpstream = storage.requests.slice(beforeUpstream.length);
  expect(beforeUpstream.map((line) => line.split(' ')[0]).sort()).toEqual(['PUT', 'PUT']);
  expect(beforeUpstream.some((line) => line.includes('/keys/'))).toBe(true);
  expect(beforeUpstream.some((line) => line.includes('/instances/'))).toBe(true);
  // The document (with the ETag its creation gave: no read) and the key's schedule.
  expect(afterUpstream.sort()).toEqual([expect.stringMatching(/^PUT .*\/instances\//), expect.stringMatching(/^PUT .*\/keys\/.*\?comp=metadata$/)]);
});

describe('storage requests per start and per poll stay within their targets', () => {
  /** A run's own requests (listings, the janitor's cursor) left out: what the orchestrations cost. */
  const perOrchestration = (lines: readonly string[]) => lines.filter((line) => !line.includes('comp=list') && !line.endsWith('/janitor.json'));

  it('a long-running start makes 4, a start answered final at once at most 5', async () => {
    const engine = makeEngine();
    await engine.store.ensureReady();
    storage.reset();
    await engine.start(groupStart('goes-on'), sendFor(groupStart('goes-on')));
    expect(storage.requests).toHaveLength(4);
    storage.reset();
    expect(await engine.start(groupStart('done-at-once'), finishedAtOnce)).toMatchObject({ kind: 'final' });
    // The key and the document, the ended document, the key freed and the purge marked.
    expect(storage.requests.length).toBeLessThanOrEqual(5);
  });

  it('a poll makes at most 3 when the operation goes on (claim, record, reschedule) and 4 when it ends', async () => {
    const engine = makeEngine();
    const count = 10;
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1) ids.push((await engine.start(groupStart(`polled-${index}`), sendFor(groupStart(`polled-${index}`)))).state.id);
    await engine.sweep(token); // nothing due yet; the janitor takes its first turn
    clock += 2000;
    storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: count, polled: count });
    expect(perOrchestration(storage.requests).length).toBeLessThanOrEqual(3 * count);
    clock += 2000;
    storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: count, polled: count });
    // The claim, the ended document, the key freed and the purge marked.
    expect(perOrchestration(storage.requests).length).toBeLessThanOrEqual(4 * count);
    for (const id of ids) expect(await engine.get(id)).toMatchObject({ runtimeStatus: 'Completed' });
  }, 60_000);

  it('a poll by an instance that did not write the orchestration last reads it first: one request more, never a wrong step', async () => {
    const starter = makeEngine();
    const poller = makeEngine();
    const outcome = await starter.start(groupStart('elsewhere'), sendFor(groupStart('elsewhere')));
    await poller.sweep(token); // nothing due yet; the janitor takes its first turn
    clock += 2000;
    storage.reset();
    expect(await poller.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect(perOrchestration(storage.requests)).toHaveLength(4);
    // The starter's version is stale now: its claim is refused, it reads, and polls once.
    clock += 2000;
    storage.reset();
    expect(await starter.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect(await starter.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Completed' });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
  }, 30_000);
});

it('a second identical start while the first still writes its document joins it: the upstream sees one', async () => {
  // The first start's document write is held back 400 ms; the second start reads the key then.
  let holdBack = true;
  const slow = countingStorage(azurite.connectionString, (line) => (holdBack && line.startsWith('PUT') && line.includes('/instances/') ? ((holdBack = false), 400) : 0));
  const engineOn = (service: CountingStorage) =>
    engineOnContainer(service.service.getContainerClient(container), { storageTimeoutMs: 5000, upstream: upstream(), settings: defaultOrchestrationSettings, now: Date.now, log: () => undefined });
  await engineOn(storage).store.ensureReady();
  const start = groupStart('raced');
  const first = engineOn(slow).start(start, sendFor(start));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const second = await engineOn(storage).start(start, sendFor(start));
  const firstOutcome = await first;
  expect(second).toMatchObject({ kind: 'duplicate', state: { id: firstOutcome.state.id } });
  expect(emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
});

it('purges what passed its retention in bounded batches, with its index entries', async () => {
  // The janitor would purge what is past retention too (its own path): here it waits.
  const engine = makeEngine(() => clock, { purgeBatch: 5, janitorIntervalMs: 24 * 3600_000 });
  const ids = await endedOrchestrations(engine, 12);
  expect(await engine.sweep(token)).toMatchObject({ purged: 0 });
  clock += retentionMs + 3600_000;
  const purged = [];
  for (let run = 0; run < 4; run += 1) purged.push((await engine.sweep(token)).purged);
  expect(purged).toEqual([5, 5, 2, 0]);
  for (const id of ids) expect(await engine.get(id)).toBeUndefined();
  expect(await blobNames('expiry/')).toEqual([]);
  expect(await blobNames('instances/')).toEqual([]);
});

describe('the janitor', () => {
  const document = (fields: Partial<OrchestrationState>): OrchestrationState => ({
    id: randomUUID(),
    name: 'ContainerGroups_CreateOrUpdate',
    runtimeStatus: 'Pending',
    input: { method: 'PUT', path: groupStart('x').path, query: [] },
    requestKey: randomUUID().replaceAll('-', ''),
    createdTime: new Date(clock).toISOString(),
    lastUpdatedTime: new Date(clock).toISOString(),
    ...fields,
  });

  it('fails a start that died before claiming its key, purges what ended before the index, and runs once per interval', async () => {
    const engine = makeEngine();
    await engine.sweep(token); // the janitor's first turn, on an empty store
    const orphan = document({});
    const oldEnded = document({ runtimeStatus: 'Completed', endedTime: new Date(clock - 2 * retentionMs).toISOString() });
    const store = engine.store;
    await store.create(orphan);
    await store.create(oldEnded);
    clock += 11 * 60_000; // past the stale-start timeout, within the janitor's hour
    await engine.sweep(token);
    expect(await engine.get(orphan.id)).toMatchObject({ runtimeStatus: 'Pending' });
    clock += 60 * 60_000;
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 2 });
    expect(await engine.get(orphan.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'StartInterrupted' } });
    expect(await engine.get(oldEnded.id)).toBeUndefined();
  });

  it('finishes what an instance that died between ending a document and updating the index left, when its key next falls due', async () => {
    const notifyUrl = 'http://127.0.0.1:9/hook';
    const engine = makeEngine(() => clock, { notifyUrl });
    const start = groupStart('died-after-end');
    const outcome = await engine.start(start, sendFor(start));
    // The document ended (its outbox open), but the key, expiry and outbox markers were never written.
    const stored = (await engine.store.read(outcome.state.id))!;
    const endedState = ended(stored.state, { runtimeStatus: 'Terminated' }, clock, { notifyUrl, newId: randomUUID });
    await engine.store.replace(endedState, stored.etag);
    expect(await blobNames('keys/')).toHaveLength(1);
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 0 });
    clock += 5000; // the key's schedule (a hint) says when to look again
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 1 });
    expect(await blobNames('keys/')).toEqual([]);
    expect((await blobNames('expiry/')).some((name) => name.endsWith(outcome.state.id))).toBe(true);
    // Its outbox was marked and taken in the same run (this engine holds no signing key, so the
    // attempt is recorded as given up, and the marker goes).
    expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ attempts: 1, state: 'failed' }]);
    expect(await blobNames('outbox/')).toEqual([]);
  });

  it('carries on an orchestration whose key was written without its schedule (an older version)', async () => {
    const engine = makeEngine();
    const start = groupStart('legacy');
    const outcome = await engine.start(start, sendFor(start));
    // The key as the previous version wrote it: the id as content, no metadata.
    const key = storage.service.getContainerClient(container).getBlockBlobClient(`keys/${outcome.state.requestKey}`);
    await key.upload(outcome.state.id, outcome.state.id.length);
    clock += 2000;
    expect(await engine.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect((await key.getProperties()).metadata).toMatchObject({ id: outcome.state.id, nextpollat: expect.stringMatching(/^\d+$/) });
  });
});

it('a continuation token walks 1,000 stored orchestrations once each, and a narrow filter reads growing listing pages', async () => {
  const engine = makeEngine();
  const statuses = ['Completed', 'Failed', 'Terminated', 'Completed', 'Completed'] as const;
  const ids: string[] = [];
  await engine.store.ensureReady();
  for (let batch = 0; batch < 1000; batch += 50) {
    const documents = Array.from({ length: 50 }, (_, index) => {
      const id = randomUUID();
      ids.push(id);
      const time = new Date(clock).toISOString();
      return { id, name: 'ContainerGroups_CreateOrUpdate', runtimeStatus: statuses[(batch + index) % 5]!, input: { method: 'PUT', path: 'p', query: [] }, requestKey: id, createdTime: time, lastUpdatedTime: time, endedTime: time } satisfies OrchestrationState;
    });
    await Promise.all(documents.map((state) => engine.store.create(state)));
  }
  const walk = async (statusesWanted: OrchestrationState['runtimeStatus'][] | undefined, top: number) => {
    const seen: string[] = [];
    let continuationToken: string | undefined;
    let answers = 0;
    do {
      const page = await engine.query({ statuses: statusesWanted, top, continuationToken, maxScanned: 10_000, timeBudgetMs: 5000 });
      expect(page.summaries.length).toBeLessThanOrEqual(top);
      seen.push(...page.summaries.map((summary) => summary.id));
      continuationToken = page.continuationToken;
      answers += 1;
    } while (continuationToken && answers < 2000);
    return seen;
  };
  const all = await walk(undefined, 230);
  expect(all).toHaveLength(1000);
  expect(new Set(all)).toEqual(new Set(ids));

  // 200 Failed among 1,000, one asked for: one listing call, not one per document read.
  storage.reset();
  const first = await engine.query({ statuses: ['Failed'], top: 1, maxScanned: 10_000, timeBudgetMs: 5000 });
  expect(first.summaries).toHaveLength(1);
  expect(storage.requests.filter((line) => line.includes('comp=list'))).toHaveLength(1);
  // None among 1,000: pages grow (100, 200, 400 …), so the whole store is read in a few calls.
  storage.reset();
  expect((await engine.query({ statuses: ['Running'], top: 1, maxScanned: 10_000, timeBudgetMs: 5000 })).summaries).toEqual([]);
  expect(storage.requests.filter((line) => line.includes('comp=list')).length).toBeLessThanOrEqual(4);
  const failed = await walk(['Failed'], 47);
  expect(failed).toHaveLength(200);
  expect(new Set(failed).size).toBe(200);
}, 60_000);

describe('waiting', () => {
  it('is served by another instance\'s polls, and the upstream is read no more than the operation asks', async () => {
    const waiter = makeEngine(Date.now);
    const poller = makeEngine(Date.now);
    const start = groupStart('waited');
    const outcome = await waiter.start(start, sendFor(start));
    let done = false;
    const polling = (async () => {
      while (!done) {
        await poller.sweep(token, 0);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    // The waiter polls too when a poll falls due: the claim decides which instance makes it.
    const ended = await new OrchestrationWatches(waiter).wait(outcome.state.id, { untilMs: Date.now() + 20_000, reader: { token } });
    done = true;
    await polling;
    expect(ended).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200, body: { name: 'waited' } } });
    // lroSteps = 2: two Location reads and one final GET, whoever made them.
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
    expect(emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/waited' })).toHaveLength(1);
  }, 30_000);

  it('with a reader and no other instance, makes the polls itself until the end', async () => {
    const alone = makeEngine(Date.now);
    const start = groupStart('alone');
    const outcome = await alone.start(start, sendFor(start));
    const ended = await new OrchestrationWatches(alone).wait(outcome.state.id, { untilMs: Date.now() + 20_000, reader: { token } });
    expect(ended).toMatchObject({ runtimeStatus: 'Completed' });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
  }, 30_000);

  it('stops reading with a token the upstream refuses, and ends when the wait does', async () => {
    const engine = makeEngine(Date.now);
    const start = groupStart('refused-wait');
    const outcome = await engine.start(start, sendFor(start));
    const startedAt = Date.now();
    const state = await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: startedAt + 3000, reader: { token: 'refused-token' } });
    expect(state).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 401 } });
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(1);
    expect(Date.now() - startedAt).toBeLessThan(3000 + 1500);
  });

  it('gives a poll only the time the wait has left', async () => {
    const engine = makeEngine(Date.now);
    const start = groupStart('slow-read');
    const outcome = await engine.start(start, sendFor(start));
    emulator.script({ kind: 'delay', delayMs: 8000, pathPattern: 'operationResults' });
    const startedAt = Date.now();
    await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: startedAt + 2500, reader: { token } });
    // The read that would have taken 8 s was cut at the end of the wait.
    expect(Date.now() - startedAt).toBeLessThan(2500 + 1500);
  });

  it('without a reader only watches: the end comes from another instance, and the wait ends on time otherwise', async () => {
    const watcher = makeEngine(Date.now);
    const start = groupStart('watched');
    const outcome = await watcher.start(start, sendFor(start));
    const startedAt = Date.now();
    const notYet = await new OrchestrationWatches(watcher).wait(outcome.state.id, { untilMs: startedAt + 1500 });
    expect(notYet?.runtimeStatus).toBe('Running');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1400);
    expect(emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(0);
  });

  it('in one process shares one watch: a large input is not downloaded while it runs, and the document once at its end, however many wait', async () => {
    const engine = makeEngine(Date.now);
    const watches = new OrchestrationWatches(engine);
    const start = groupStart('large-input');
    const body = { ...(JSON.parse(start.bodyText!) as Record<string, unknown>), tags: { note: 'x'.repeat(1024 * 1024) } };
    const large = { ...start, bodyText: JSON.stringify(body), bodyValue: body };
    const outcome = await engine.start(large, sendFor(large));
    const id = outcome.state.id;
    storage.reset();
    const waits = Array.from({ length: 20 }, () => watches.wait(id, { untilMs: Date.now() + 20_000 }));
    expect(watches.watched).toBe(1);
    while (storage.requests.filter((line) => line.startsWith('HEAD ')).length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(storage.requests.filter((line) => line.startsWith('GET '))).toEqual([]);
    await makeEngine(Date.now).terminate(id, 'Ended by the test.');
    const ended = await Promise.all(waits);
    expect(ended.map((state) => state?.runtimeStatus)).toEqual(Array(20).fill('Terminated'));
    // The terminate's own read, and the watch's one read of the version it ended in.
    expect(storage.requests.filter((line) => line === `GET ${container}/instances/${id}.json`)).toHaveLength(2);
    expect(watches.watched).toBe(0);
  }, 60_000);

  it('ends a wait whose caller left at once, and stops the watch with the last one', async () => {
    const engine = makeEngine(Date.now);
    const watches = new OrchestrationWatches(engine);
    const start = groupStart('left');
    const outcome = await engine.start(start, sendFor(start));
    const callers = [new AbortController(), new AbortController()];
    const waits = callers.map((caller) => watches.wait(outcome.state.id, { untilMs: Date.now() + 20_000, signal: caller.signal }));
    while (storage.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    callers[0]!.abort();
    await waits[0];
    expect(watches.watched).toBe(1);
    callers[1]!.abort();
    await waits[1];
    expect(watches.watched).toBe(0);
    // A look already on its way may land; after it, nothing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    storage.reset();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(storage.requests).toEqual([]);
  }, 30_000);

  it('carries on a document written before its poll times were kept in metadata (an older version)', async () => {
    const engine = makeEngine(Date.now);
    const start = groupStart('older-metadata');
    const outcome = await engine.start(start, sendFor(start));
    const blob = storage.service.getContainerClient(container).getBlockBlobClient(`instances/${outcome.state.id}.json`);
    const { metadata = {} } = await blob.getProperties();
    const { nextpollat: _next, claimeduntil: _claim, deadlineat: _deadline, lastreadstatus: _status, ...older } = metadata;
    await blob.setMetadata(older);
    const ended = await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: Date.now() + 20_000, reader: { token } });
    expect(ended).toMatchObject({ runtimeStatus: 'Completed' });
  }, 30_000);
});
