/**
 * The poller's run (orchestrationSweeper.ts), counted in storage requests: it costs what is due
 * whatever has ended, a poll that goes on costs three and one that ends four, a poll by another
 * instance reads first, and purges come in bounded batches.
 */
import { blobNames, endedOrchestrations, groupStart, makeEngine, retentionMs, sendFor, token, useEngineFixture } from '../helpers/engineFixture';

const fx = useEngineFixture();

describe('a poller run costs what is due, not what is stored', () => {
  it('makes the same storage requests with 0 and with 200 ended orchestrations stored', async () => {
    const engine = makeEngine(fx);
    for (const name of ['running-a', 'running-b']) await engine.start(groupStart(fx, name), sendFor(fx, groupStart(fx, name)));
    await engine.sweep(token); // the janitor takes its first turn, and then waits an hour
    fx.storage.reset();
    await engine.sweep(token);
    const withNoneEnded = [...fx.storage.requests];

    await endedOrchestrations(fx, engine, 200);
    fx.storage.reset();
    const result = await engine.sweep(token);
    expect(fx.storage.requests).toEqual(withNoneEnded);
    expect(result).toMatchObject({ due: 0, polled: 0, purged: 0 });
    // Listing what runs, what has deliveries due, the expiry buckets, and the janitor's cursor.
    expect(withNoneEnded.length).toBeLessThanOrEqual(5);
  }, 60_000);

  it('reads the documents of due orchestrations only', async () => {
    const engine = makeEngine(fx);
    await endedOrchestrations(fx, engine, 40);
    // Started by another instance: this one holds no version of it, so it reads it.
    const started = await makeEngine(fx).start(groupStart(fx, 'due-now'), sendFor(fx, groupStart(fx, 'due-now')));
    await engine.sweep(token);
    fx.clock += 2000;
    fx.storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    const documentReads = fx.storage.requests.filter((line) => line.startsWith('GET') && line.includes('/instances/'));
    expect(documentReads).toEqual([`GET ${fx.container}/instances/${started.state.id}.json`]);
  });
});

describe('storage requests per poll stay within their targets', () => {
  /** A run's own requests (listings, the janitor's cursor) left out: what the orchestrations cost. */
  const perOrchestration = (lines: readonly string[]) => lines.filter((line) => !line.includes('comp=list') && !line.endsWith('/janitor.json'));

  it('a poll makes at most 3 when the operation goes on (claim, record, reschedule) and 4 when it ends', async () => {
    const engine = makeEngine(fx);
    const count = 10;
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1)
      ids.push((await engine.start(groupStart(fx, `polled-${index}`), sendFor(fx, groupStart(fx, `polled-${index}`)))).state.id);
    await engine.sweep(token); // nothing due yet; the janitor takes its first turn
    fx.clock += 2000;
    fx.storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: count, polled: count });
    expect(perOrchestration(fx.storage.requests).length).toBeLessThanOrEqual(3 * count);
    fx.clock += 2000;
    fx.storage.reset();
    expect(await engine.sweep(token)).toMatchObject({ due: count, polled: count });
    // The claim, the ended document, the key freed and the purge marked.
    expect(perOrchestration(fx.storage.requests).length).toBeLessThanOrEqual(4 * count);
    for (const id of ids) expect(await engine.get(id)).toMatchObject({ runtimeStatus: 'Completed' });
  }, 60_000);

  it('a poll a caller drives (passthrough read, gateway-wait) on the instance that wrote last is claimed without a read', async () => {
    const engine = makeEngine(fx);
    const outcome = await engine.start(groupStart(fx, 'driven'), sendFor(fx, groupStart(fx, 'driven')));
    fx.clock += 2000;
    fx.storage.reset();
    expect(await engine.advance(outcome.state.id, { token })).toBe(true);
    // The claim, the record and the key's schedule: the key read too, as no listing gave its ETag.
    expect(fx.storage.requests.filter((line) => line.startsWith('GET ') && line.includes('/instances/'))).toEqual([]);
    expect(await engine.get(outcome.state.id)).toMatchObject({ poll: { pollCount: 1 } });
  }, 30_000);

  it('a poll by an instance that did not write the orchestration last reads it first: one request more, never a wrong step', async () => {
    const starter = makeEngine(fx);
    const poller = makeEngine(fx);
    const outcome = await starter.start(groupStart(fx, 'elsewhere'), sendFor(fx, groupStart(fx, 'elsewhere')));
    await poller.sweep(token); // nothing due yet; the janitor takes its first turn
    fx.clock += 2000;
    fx.storage.reset();
    expect(await poller.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect(perOrchestration(fx.storage.requests)).toHaveLength(4);
    // The starter's version is stale now: its claim is refused, it reads, and polls once.
    fx.clock += 2000;
    fx.storage.reset();
    expect(await starter.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect(await starter.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Completed' });
    expect(fx.emulator.upstreamRequests({ pathIncludes: '/operationResults/' })).toHaveLength(2);
  }, 30_000);
});

it('purges what passed its retention in bounded batches, with its index entries', async () => {
  // The janitor would purge what is past retention too (its own path): here it waits.
  const engine = makeEngine(fx, () => fx.clock, { purgeBatch: 5, janitorIntervalMs: 24 * 3600_000 });
  const ids = await endedOrchestrations(fx, engine, 12);
  expect(await engine.sweep(token)).toMatchObject({ purged: 0 });
  fx.clock += retentionMs + 3600_000;
  const purged = [];
  for (let run = 0; run < 4; run += 1) purged.push((await engine.sweep(token)).purged);
  expect(purged).toEqual([5, 5, 2, 0]);
  for (const id of ids) expect(await engine.get(id)).toBeUndefined();
  expect(await blobNames(fx, 'expiry/')).toEqual([]);
  expect(await blobNames(fx, 'instances/')).toEqual([]);
});

describe("a poll's claim", () => {
  it("bounds the poll's reads: a read slower than the claim is cut before the claim ends, so no other instance can claim the same due poll meanwhile", async () => {
    const engine = makeEngine(fx, () => fx.clock, { claimMs: 1000 });
    const outcome = await engine.start(groupStart(fx, 'slower-than-claim'), sendFor(fx, groupStart(fx, 'slower-than-claim')));
    fx.clock += 2000;
    // Within the upstream client's own 2 s, but longer than the claim.
    fx.emulator.script({ kind: 'delay', delayMs: 1500, method: 'GET' });
    expect(await engine.advance(outcome.state.id, { token })).toBe(true);
    // Cut as a timeout (a failed read, tried again later), not answered after the claim ended.
    expect(await engine.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 504 } });
  }, 30_000);

  it('a record made after the claim lapsed does not release the claim another instance took since', async () => {
    const first = makeEngine(fx);
    const second = makeEngine(fx);
    const outcome = await first.start(groupStart(fx, 'late-record'), sendFor(fx, groupStart(fx, 'late-record')));
    fx.clock += 2000;
    fx.emulator.script({ kind: 'delay', delayMs: 1200, method: 'GET' });
    const firstPoll = first.advance(outcome.state.id, { token });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first instance stalls past its claim (a paused process): the second takes the poll.
    fx.clock += 61_000;
    fx.emulator.script({ kind: 'delay', delayMs: 1800, method: 'GET' });
    const secondPoll = second.advance(outcome.state.id, { token });
    await firstPoll;
    const during = await first.get(outcome.state.id);
    await secondPoll;
    expect(during).toMatchObject({ runtimeStatus: 'Running', poll: { claimedUntil: expect.any(Number) } });
    expect(during!.poll!.claimedUntil).toBeGreaterThan(fx.clock);
  }, 30_000);
});

it("holds a poll's answer to its byte bound: a larger one is a failed read, tried again, not the operation's end", async () => {
  const engine = makeEngine(fx, () => fx.clock, { pollMaxBytes: 64 * 1024 });
  const outcome = await engine.start(groupStart(fx, 'runaway-status'), sendFor(fx, groupStart(fx, 'runaway-status')));
  fx.clock += 6000;
  fx.emulator.script({ kind: 'answer', method: 'GET', status: 200, body: { properties: { provisioningState: 'Succeeded', padding: 'x'.repeat(100 * 1024) } } });
  expect(await engine.advance(outcome.state.id, { token })).toBe(true);
  // Cut as the upstream client cuts any answer past its bound (502), and read again at the next poll.
  expect(await engine.get(outcome.state.id)).toMatchObject({ runtimeStatus: 'Running', customStatus: { lastReadStatus: 502 }, poll: { failedReads: 1 } });
}, 30_000);
