/**
 * The janitor (orchestrationJanitor.ts) and the repairs a run makes from the index: what a
 * crash between two writes or an older version left.
 */
import { randomUUID } from 'node:crypto';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import { ended } from '../../src/orchestration/transitions';
import { IdleShareBuckets } from '../../src/access/shareBucketJanitor';
import { defaultOrchestrationSettings, engineOnContainer } from '../../src/orchestration/orchestrationEngine';
import { allExpiring } from '../../src/storage/onceMarkers';
import { StorageBudget } from '../../src/storage/storageBudget';
import { blobNames, groupStart, makeEngine, retentionMs, sendFor, token, upstreamOf, useEngineFixture } from '../helpers/engineFixture';
import { sharedRatesOn } from '../../tools/harness/sharedRates';

const fx = useEngineFixture();

describe('the janitor', () => {
  const document = (fields: Partial<OrchestrationState>): OrchestrationState => ({
    id: randomUUID(),
    name: 'ContainerGroups_CreateOrUpdate',
    runtimeStatus: 'Pending',
    input: { method: 'PUT', path: groupStart(fx, 'x').path, query: [] },
    requestKey: randomUUID().replaceAll('-', ''),
    createdTime: new Date(fx.clock).toISOString(),
    lastUpdatedTime: new Date(fx.clock).toISOString(),
    ...fields,
  });

  it('fails a start that died before claiming its key, purges what ended before the index, and runs once per interval', async () => {
    const engine = makeEngine(fx);
    await engine.sweep(token); // the janitor's first turn, on an empty store
    const orphan = document({});
    const oldEnded = document({ runtimeStatus: 'Completed', endedTime: new Date(fx.clock - 2 * retentionMs).toISOString() });
    const store = engine.store;
    await store.create(orphan);
    await store.create(oldEnded);
    fx.clock += 11 * 60_000; // past the stale-start timeout, within the janitor's hour
    await engine.sweep(token);
    expect(await engine.get(orphan.id)).toMatchObject({ runtimeStatus: 'Pending' });
    fx.clock += 60 * 60_000;
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 2 });
    expect(await engine.get(orphan.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'StartInterrupted' } });
    expect(await engine.get(oldEnded.id)).toBeUndefined();
  });

  it('finishes what an instance that died between ending a document and updating the index left, when its key next falls due', async () => {
    const notifyUrl = 'http://127.0.0.1:9/hook';
    const engine = makeEngine(fx, () => fx.clock, { notifyUrl });
    const start = groupStart(fx, 'died-after-end');
    const outcome = await engine.start(start, sendFor(fx, start));
    // The document ended (its outbox open), but the key, expiry and outbox markers were never written.
    const stored = (await engine.store.read(outcome.state.id))!;
    const endedState = ended(stored.state, { runtimeStatus: 'Terminated' }, fx.clock, { notifyUrl, newId: randomUUID });
    await engine.store.replace(endedState, stored.etag);
    expect(await blobNames(fx, 'keys/')).toHaveLength(1);
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 0 });
    fx.clock += 5000; // the key's schedule (a hint) says when to look again
    expect(await engine.sweep(token)).toMatchObject({ reconciled: 1 });
    expect(await blobNames(fx, 'keys/')).toEqual([]);
    expect((await blobNames(fx, 'expiry/')).some((name) => name.endsWith(outcome.state.id))).toBe(true);
    // Its outbox was marked and taken in the same run (this engine holds no signing key, so the
    // attempt is recorded as given up, and the marker goes).
    expect((await engine.get(outcome.state.id))?.deliveries).toMatchObject([{ attempts: 1, state: 'failed' }]);
    expect(await blobNames(fx, 'outbox/')).toEqual([]);
  });

  it('carries on an orchestration whose key was written without its schedule (an older version)', async () => {
    const engine = makeEngine(fx);
    const start = groupStart(fx, 'legacy');
    const outcome = await engine.start(start, sendFor(fx, start));
    // The key as the previous version wrote it: the id as content, no metadata.
    const key = fx.storage.service.getContainerClient(fx.container).getBlockBlobClient(`keys/${outcome.state.requestKey}`);
    await key.upload(outcome.state.id, outcome.state.id.length);
    fx.clock += 2000;
    expect(await engine.sweep(token)).toMatchObject({ due: 1, polled: 1 });
    expect((await key.getProperties()).metadata).toMatchObject({ id: outcome.state.id, nextpollat: expect.stringMatching(/^\d+$/) });
  });

  it("removes the callers' share buckets idle for long with the other expiring records, at most the purge batch a run", async () => {
    const container = fx.storage.service.getContainerClient(fx.container);
    const rates = sharedRatesOn(fx.storage.service, () => fx.container, { timeoutMs: 5000, now: () => fx.clock, warn: () => undefined });
    for (const caller of ['a', 'b', 'c', 'd']) expect((await rates.take(`key:${caller}`, caller === 'd' ? 'writes' : 'reads', 60)).allowed).toBe(true);
    await rates.settled();
    const buckets = new IdleShareBuckets(container, new StorageBudget(5000, 'Caller share buckets'), 10_000);
    // The buckets' last writes are dated by the storage service's clock: the janitor's clock is set from it.
    let now = Date.now();
    const engine = engineOnContainer(container, {
      storageTimeoutMs: 5000,
      upstream: upstreamOf(fx),
      expiringMarkers: allExpiring([buckets]),
      settings: { ...defaultOrchestrationSettings, retentionMs, recordsBatch: 3 },
      now: () => now,
      log: () => undefined,
    });
    await engine.sweep(token);
    expect(await blobNames(fx, 'caller-shares/')).toHaveLength(4);
    now = Date.now() + buckets.idleAfterMs + 1000;
    await engine.sweep(token);
    expect(await blobNames(fx, 'caller-shares/')).toHaveLength(1);
    await engine.sweep(token);
    expect(await blobNames(fx, 'caller-shares/')).toEqual([]);
  });
});
