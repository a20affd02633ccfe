/**
 * Starting (orchestrationStarter.ts), counted in storage requests: the request key and the
 * document before the upstream call, the poll plan and the key's schedule after it; a start
 * answered final at once ends within five; a repeat while the first still writes joins it; a
 * transient storage failure after the upstream answered does not lose the start.
 */
import { GatewayError, renderErrorBody } from '../../src/errors';
import { defaultOrchestrationSettings, engineOnContainer, type StartRequest } from '../../src/orchestration/orchestrationEngine';
import { requestKeyOf } from '../../src/orchestration/orchestrationStarter';
import type { UpstreamResponse } from '../../src/upstream/upstreamClient';
import { countingStorage, type CountingStorage, type Stall } from '../../tools/harness/countingStorage';
import { blobNames, finishedAtOnce, groupStart, makeEngine, sendFor, token, upstreamOf, useEngineFixture } from '../helpers/engineFixture';

const fx = useEngineFixture();

it('a start makes two storage requests before the upstream call and two after, and none twice', async () => {
  const engine = makeEngine(fx);
  await engine.start(groupStart(fx, 'warm-up'), sendFor(fx, groupStart(fx, 'warm-up'))); // creates the container
  fx.storage.reset();
  let beforeUpstream: string[] = [];
  const start = groupStart(fx, 'counted');
  await engine.start(start, async () => {
    beforeUpstream = [...fx.storage.requests];
    return sendFor(fx, start)();
  });
  const afterUpstream = fx.storage.requests.slice(beforeUpstream.length);
  expect(beforeUpstream.map((line) => line.split(' ')[0]).sort()).toEqual(['PUT', 'PUT']);
  expect(beforeUpstream.some((line) => line.includes('/keys/'))).toBe(true);
  expect(beforeUpstream.some((line) => line.includes('/instances/'))).toBe(true);
  // The document (with the ETag its creation gave: no read) and the key's schedule.
  expect(afterUpstream.sort()).toEqual([expect.stringMatching(/^PUT .*\/instances\//), expect.stringMatching(/^PUT .*\/keys\/.*\?comp=metadata$/)]);
});

describe('storage requests per start stay within their targets', () => {
  it('a long-running start makes 4, a start answered final at once at most 5', async () => {
    const engine = makeEngine(fx);
    await engine.store.ensureReady();
    fx.storage.reset();
    await engine.start(groupStart(fx, 'goes-on'), sendFor(fx, groupStart(fx, 'goes-on')));
    expect(fx.storage.requests).toHaveLength(4);
    fx.storage.reset();
    expect(await engine.start(groupStart(fx, 'done-at-once'), finishedAtOnce)).toMatchObject({ kind: 'final' });
    // The key and the document, the ended document, the key freed and the purge marked.
    expect(fx.storage.requests.length).toBeLessThanOrEqual(5);
  });
});

it.each([
  ['', 0],
  [", the second instance's clock 20 s ahead of storage's (the start's age is read on storage's clock)", 20_000],
])('a second identical start while the first still writes its document joins it%s: the upstream sees one', async (_title, skewMs) => {
  // The first start's document write is held back 400 ms; the second start reads the key then.
  let holdBack = true;
  const slow = countingStorage(fx.azurite.connectionString, (line) =>
    holdBack && line.startsWith('PUT') && line.includes('/instances/') ? ((holdBack = false), 400) : 0,
  );
  const engineOn = (service: CountingStorage, now: () => number) =>
    engineOnContainer(service.service.getContainerClient(fx.container), {
      storageTimeoutMs: 5000,
      upstream: upstreamOf(fx),
      settings: defaultOrchestrationSettings,
      now,
      log: () => undefined,
    });
  await engineOn(fx.storage, Date.now).store.ensureReady();
  const start = groupStart(fx, 'raced');
  const first = engineOn(slow, Date.now).start(start, sendFor(fx, start));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const second = await engineOn(fx.storage, () => Date.now() + skewMs).start(start, sendFor(fx, start));
  const firstOutcome = await first;
  expect(second).toMatchObject({ kind: 'duplicate', state: { id: firstOutcome.state.id } });
  expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
});

it('a start refused while another holds its request key leaves no document behind to be failed as interrupted', async () => {
  const engine = makeEngine(fx);
  await engine.store.ensureReady();
  const start = groupStart(fx, 'key-held');
  // The key of a start whose instance died between its two first writes, moments ago: not yet to be taken over.
  const key = fx.storage.service.getContainerClient(fx.container).getBlockBlobClient(`keys/${requestKeyOf(start)}`);
  await key.upload('died-before-its-document', 'died-before-its-document'.length, {
    metadata: { id: 'died-before-its-document', startedat: String(fx.clock) },
  });
  await expect(engine.start(start, sendFor(fx, start))).rejects.toMatchObject({ code: 'Conflict' });
  expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(0);
  expect(await blobNames(fx, 'instances/')).toEqual([]);
});

describe('a storage failure right after the upstream accepted a start', () => {
  /**
   * An engine whose storage stalls, once the upstream has answered, the writes `stalls` picks
   * (until the budget aborts them: a transient failure with nothing timed), counting them.
   */
  function stallingEngine(stalls: (line: string, stalledSoFar: number) => Stall | undefined) {
    const seen = { answered: false, stalled: 0 };
    const storage = countingStorage(fx.azurite.connectionString, undefined, (line) => {
      const stall = seen.answered ? stalls(line, seen.stalled) : undefined;
      if (stall) seen.stalled += 1;
      return stall;
    });
    const settings = {
      ...defaultOrchestrationSettings,
      pollInterval: { defaultMs: 5000, floorMs: 1000, ceilingMs: 60_000 },
      deadlineMs: {},
      defaultDeadlineMs: 10 * 60_000,
    };
    const engine = engineOnContainer(storage.service.getContainerClient(fx.container), {
      storageTimeoutMs: 1000,
      upstream: upstreamOf(fx),
      settings,
      now: () => fx.clock,
      log: () => undefined,
    });
    const startOn = (start: StartRequest, send: () => Promise<UpstreamResponse> = sendFor(fx, start)) =>
      engine.start(start, async () => {
        const response = await send();
        seen.answered = true;
        return response;
      });
    return { engine, seen, startOn };
  }

  const documentWrite = (line: string) => line.startsWith('PUT') && line.includes('/instances/');
  const keySchedule = (line: string) => line.startsWith('PUT') && line.endsWith('?comp=metadata');

  it.each<[string, (line: string) => boolean, Stall]>([
    ["the document's write never sent", documentWrite, 'request'],
    ['the document written but its answer lost', documentWrite, 'answer'],
    ["the request key's schedule never sent", keySchedule, 'request'],
  ])('one transient failure (%s): the caller gets the accepted answer and the orchestration ends as the upstream did', async (_title, which, stall) => {
    const { engine, seen, startOn } = stallingEngine((line, stalledSoFar) => (stalledSoFar === 0 && which(line) ? stall : undefined));
    const outcome = await startOn(groupStart(fx, 'accepted'));
    expect(seen.stalled).toBe(1);
    expect(outcome).toMatchObject({ kind: 'running', response: { status: 201 }, state: { runtimeStatus: 'Running', poll: { mode: 'location' } } });
    for (let tick = 0; tick < 10 && (await engine.get(outcome.state.id))?.runtimeStatus === 'Running'; tick += 1) {
      fx.clock += 60_000;
      await engine.sweep(token);
    }
    expect(await engine.get(outcome.state.id)).toMatchObject({
      runtimeStatus: 'Completed',
      output: { status: 200, body: { properties: { provisioningState: 'Succeeded' } } },
    });
    expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
  });

  it('one transient failure recording a final answer: the caller gets it and the orchestration is Completed', async () => {
    const { seen, startOn } = stallingEngine((line, stalledSoFar) => (stalledSoFar === 0 && documentWrite(line) ? 'request' : undefined));
    const outcome = await startOn(groupStart(fx, 'final'), finishedAtOnce);
    expect(seen.stalled).toBe(1);
    expect(outcome).toMatchObject({ kind: 'final', state: { runtimeStatus: 'Completed' } });
  });

  it('a failure that lasts: 503 StorageUnavailable after the bounded tries, and a repeat joins the operation the upstream runs', async () => {
    const { engine, seen, startOn } = stallingEngine((line) => (documentWrite(line) ? 'request' : undefined));
    const start = groupStart(fx, 'lost');
    const failed = await startOn(start).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(GatewayError);
    expect(renderErrorBody(failed as GatewayError)).toEqual({
      error: { code: 'StorageUnavailable', message: expect.stringMatching(/^Orchestration storage (did not|failed to) update an orchestration/) },
    });
    expect((failed as GatewayError).status).toBe(503);
    expect(seen.stalled).toBe(defaultOrchestrationSettings.startRecordAttempts);
    expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
    seen.answered = false;
    // The caller tries again once storage is back: the request key still names the start.
    expect(await engine.start(start, sendFor(fx, start))).toMatchObject({ kind: 'duplicate' });
    expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
  });
});
