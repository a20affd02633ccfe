/**
 * Starting (orchestrationStarter.ts), counted in storage requests: the request key and the
 * document before the upstream call, the poll plan and the key's schedule after it; a start
 * answered final at once ends within five; a repeat while the first still writes joins it.
 */
import { defaultOrchestrationSettings, engineOnContainer } from '../../src/orchestration/orchestrationEngine';
import { countingStorage, type CountingStorage } from '../helpers/countingStorage';
import { finishedAtOnce, groupStart, makeEngine, sendFor, upstreamOf, useEngineFixture } from '../helpers/engineFixture';

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
  [', the second instance\'s clock 20 s ahead of storage\'s (the start\'s age is read on storage\'s clock)', 20_000],
])('a second identical start while the first still writes its document joins it%s: the upstream sees one', async (_title, skewMs) => {
  // The first start's document write is held back 400 ms; the second start reads the key then.
  let holdBack = true;
  const slow = countingStorage(fx.azurite.connectionString, (line) => (holdBack && line.startsWith('PUT') && line.includes('/instances/') ? ((holdBack = false), 400) : 0));
  const engineOn = (service: CountingStorage, now: () => number) =>
    engineOnContainer(service.service.getContainerClient(fx.container), { storageTimeoutMs: 5000, upstream: upstreamOf(fx), settings: defaultOrchestrationSettings, now, log: () => undefined });
  await engineOn(fx.storage, Date.now).store.ensureReady();
  const start = groupStart(fx, 'raced');
  const first = engineOn(slow, Date.now).start(start, sendFor(fx, start));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const second = await engineOn(fx.storage, () => Date.now() + skewMs).start(start, sendFor(fx, start));
  const firstOutcome = await first;
  expect(second).toMatchObject({ kind: 'duplicate', state: { id: firstOutcome.state.id } });
  expect(fx.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
});
