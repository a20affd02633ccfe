/**
 * What reading and waiting cost, counted in storage requests (deterministic, unlike a timing):
 * a continuation token walks a large store once, and a wait is served by another instance's
 * polls without a poll made twice. Against the emulator and Azurite over loopback. The costs of
 * starting, of the poller's run and of the janitor are in their own files.
 */
import { randomUUID } from 'node:crypto';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import { OrchestrationWatches } from '../../src/orchestration/orchestrationWaiter';
import { groupStart, makeEngine, sendFor, token, useEngineFixture } from '../helpers/engineFixture';

const fx = useEngineFixture();

it('a continuation token walks 1,000 stored orchestrations once each, and a narrow filter reads growing listing pages', async () => {
  const engine = makeEngine(fx);
  const statuses = ['Completed', 'Failed', 'Terminated', 'Completed', 'Completed'] as const;
  const ids: string[] = [];
  await engine.store.ensureReady();
  for (let batch = 0; batch < 1000; batch += 50) {
    const documents = Array.from({ length: 50 }, (_, index) => {
      const id = randomUUID();
      ids.push(id);
      const time = new Date(fx.clock).toISOString();
      return {
        id,
        name: 'ContainerGroups_CreateOrUpdate',
        runtimeStatus: statuses[(batch + index) % 5]!,
        input: { method: 'PUT', path: 'p', query: [] },
        requestKey: id,
        createdTime: time,
        lastUpdatedTime: time,
        endedTime: time,
      } satisfies OrchestrationState;
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
  fx.storage.reset();
  const first = await engine.query({ statuses: ['Failed'], top: 1, maxScanned: 10_000, timeBudgetMs: 5000 });
  expect(first.summaries).toHaveLength(1);
  expect(fx.storage.requests.filter((line) => line.includes('comp=list'))).toHaveLength(1);
  // None among 1,000: pages grow (100, 200, 400 …), so the whole store is read in a few calls.
  fx.storage.reset();
  expect((await engine.query({ statuses: ['Running'], top: 1, maxScanned: 10_000, timeBudgetMs: 5000 })).summaries).toEqual([]);
  expect(fx.storage.requests.filter((line) => line.includes('comp=list')).length).toBeLessThanOrEqual(4);
  const failed = await walk(['Failed'], 47);
  expect(failed).toHaveLength(200);
  expect(new Set(failed).size).toBe(200);
}, 60_000);

describe('waiting', () => {
  it("is served by another instance's polls, and the upstream is read no more than the operation asks", async () => {
    const waiter = makeEngine(fx, Date.now);
    const poller = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'waited');
    const outcome = await waiter.start(start, sendFor(fx, start));
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
    expect(fx.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
    expect(fx.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/waited' })).toHaveLength(1);
  }, 30_000);

  it('with a reader and no other instance, makes the polls itself until the end', async () => {
    const alone = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'alone');
    const outcome = await alone.start(start, sendFor(fx, start));
    const ended = await new OrchestrationWatches(alone).wait(outcome.state.id, { untilMs: Date.now() + 20_000, reader: { token } });
    expect(ended).toMatchObject({ runtimeStatus: 'Completed' });
    expect(fx.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
  }, 30_000);

  it('stops reading with a token the upstream refuses, and ends when the wait does', async () => {
    const engine = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'refused-wait');
    const outcome = await engine.start(start, sendFor(fx, start));
    const startedAt = Date.now();
    const state = await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: startedAt + 3000, reader: { token: 'refused-token' } });
    expect(state).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 401 } });
    expect(fx.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(1);
    expect(Date.now() - startedAt).toBeLessThan(3000 + 1500);
  });

  it('gives a poll only the time the wait has left', async () => {
    const engine = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'slow-read');
    const outcome = await engine.start(start, sendFor(fx, start));
    fx.emulator.script({ kind: 'delay', delayMs: 8000, pathPattern: 'operationResults' });
    const startedAt = Date.now();
    await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: startedAt + 2500, reader: { token } });
    // The read that would have taken 8 s was cut at the end of the wait.
    expect(Date.now() - startedAt).toBeLessThan(2500 + 1500);
  });

  it('without a reader only watches: the end comes from another instance, and the wait ends on time otherwise', async () => {
    const watcher = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'watched');
    const outcome = await watcher.start(start, sendFor(fx, start));
    const startedAt = Date.now();
    const notYet = await new OrchestrationWatches(watcher).wait(outcome.state.id, { untilMs: startedAt + 1500 });
    expect(notYet?.runtimeStatus).toBe('Running');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1400);
    expect(fx.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(0);
  });

  it('in one process shares one watch: a large input is not downloaded while it runs, and the document once at its end, however many wait', async () => {
    const engine = makeEngine(fx, Date.now);
    const watches = new OrchestrationWatches(engine);
    const start = groupStart(fx, 'large-input');
    const body = { ...(JSON.parse(start.bodyText!) as Record<string, unknown>), tags: { note: 'x'.repeat(1024 * 1024) } };
    const large = { ...start, bodyText: JSON.stringify(body), bodyValue: body };
    const outcome = await engine.start(large, sendFor(fx, large));
    const id = outcome.state.id;
    fx.storage.reset();
    const waits = Array.from({ length: 20 }, () => watches.wait(id, { untilMs: Date.now() + 20_000 }));
    expect(watches.watched).toBe(1);
    while (fx.storage.requests.filter((line) => line.startsWith('HEAD ')).length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fx.storage.requests.filter((line) => line.startsWith('GET '))).toEqual([]);
    await makeEngine(fx, Date.now).terminate(id, 'Ended by the test.');
    const ended = await Promise.all(waits);
    expect(ended.map((state) => state?.runtimeStatus)).toEqual(Array(20).fill('Terminated'));
    // The terminate's own read, and the watch's one read of the version it ended in.
    expect(fx.storage.requests.filter((line) => line === `GET ${fx.container}/instances/${id}.json`)).toHaveLength(2);
    expect(watches.watched).toBe(0);
  }, 60_000);

  it("takes the status its caller already read as the watch's first look", async () => {
    const engine = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'first-look');
    const outcome = await engine.start(start, sendFor(fx, start));
    const firstLook = await engine.store.readStatus(outcome.state.id);
    fx.storage.reset();
    // Runs out within the shortest pause: answered from that look, with the document it names.
    const state = await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: Date.now() + 50, firstLook });
    expect(state?.runtimeStatus).toBe('Running');
    expect(fx.storage.requests).toEqual([`GET ${fx.container}/instances/${outcome.state.id}.json`]);
  });

  it('ends a wait whose caller left at once, and stops the watch with the last one', async () => {
    const engine = makeEngine(fx, Date.now);
    const watches = new OrchestrationWatches(engine);
    const start = groupStart(fx, 'left');
    const outcome = await engine.start(start, sendFor(fx, start));
    const callers = [new AbortController(), new AbortController()];
    const waits = callers.map((caller) => watches.wait(outcome.state.id, { untilMs: Date.now() + 20_000, signal: caller.signal }));
    while (fx.storage.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    callers[0]!.abort();
    await waits[0];
    expect(watches.watched).toBe(1);
    callers[1]!.abort();
    await waits[1];
    expect(watches.watched).toBe(0);
    // A look already on its way may land; after it, nothing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    fx.storage.reset();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(fx.storage.requests).toEqual([]);
  }, 30_000);

  it('carries on a document written before its poll times were kept in metadata (an older version)', async () => {
    const engine = makeEngine(fx, Date.now);
    const start = groupStart(fx, 'older-metadata');
    const outcome = await engine.start(start, sendFor(fx, start));
    const blob = fx.storage.service.getContainerClient(fx.container).getBlockBlobClient(`instances/${outcome.state.id}.json`);
    const { metadata = {} } = await blob.getProperties();
    const { nextpollat: _next, claimeduntil: _claim, deadlineat: _deadline, lastreadstatus: _status, ...older } = metadata;
    await blob.setMetadata(older);
    const ended = await new OrchestrationWatches(engine).wait(outcome.state.id, { untilMs: Date.now() + 20_000, reader: { token } });
    expect(ended).toMatchObject({ runtimeStatus: 'Completed' });
  }, 30_000);
});
