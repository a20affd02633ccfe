/**
 * The chat routes' replay records (storage/onceMarkers.ts, chatops/chatReplays.ts) on Azurite:
 * what one costs in storage requests, that a name is taken once, and that the janitor removes
 * the expired ones, oldest first and a bounded number per run, keeping the live ones.
 */
import { defaultOrchestrationSettings, engineOnContainer } from '../../src/orchestration/orchestrationEngine';
import { OnceMarkers } from '../../src/storage/onceMarkers';
import { StorageBudget } from '../../src/storage/storageBudget';
import { blobNames, retentionMs, token, upstreamOf, useEngineFixture } from '../helpers/engineFixture';

const fx = useEngineFixture();
const lifetimeMs = 10 * 60_000;
const prefix = 'chat-replay/';

function markersOf(): OnceMarkers {
  return new OnceMarkers(fx.storage.service.getContainerClient(fx.container), prefix, new StorageBudget(5000, 'Chat replay records'), lifetimeMs);
}

describe('chat replay records', () => {
  it('take a name once, at one conditional create each (the container made the first time ever)', async () => {
    const markers = markersOf();
    fx.storage.reset();
    expect(await markers.take(fx.clock, 'slack/aa')).toBe(true);
    // The container did not exist: the create, the container's, the create again.
    expect(fx.storage.requests).toHaveLength(3);
    fx.storage.reset();
    expect(await markers.take(fx.clock, 'slack/aa')).toBe(false);
    expect(await markers.take(fx.clock, 'slack/bb')).toBe(true);
    expect(await Promise.all([markers.take(fx.clock, 'teams/cc'), markersOf().take(fx.clock, 'teams/cc')])).toEqual(expect.arrayContaining([true, false]));
    expect(fx.storage.requests).toEqual(Array.from({ length: 4 }, () => expect.stringMatching(/^PUT [^?]*chat-replay\/\d{13}\//)));
  });

  it('are removed by the janitor once expired, oldest first, at most recordsBatch in a run', async () => {
    const markers = markersOf();
    const engine = engineOnContainer(fx.storage.service.getContainerClient(fx.container), {
      storageTimeoutMs: 5000,
      upstream: upstreamOf(fx),
      expiringMarkers: markers,
      settings: { ...defaultOrchestrationSettings, retentionMs, recordsBatch: 3 },
      now: () => fx.clock,
      log: () => undefined,
    });
    // Five past their lifetime, two within it.
    for (let index = 0; index < 5; index += 1) await markers.take(fx.clock - lifetimeMs - (index + 1) * 1000, `slack/old${index}`);
    await markers.take(fx.clock - lifetimeMs + 60_000, 'slack/live0');
    await markers.take(fx.clock, 'teams/live1');
    await engine.sweep(token);
    const afterOne = await blobNames(fx, prefix);
    expect(afterOne).toHaveLength(4);
    // The three oldest went first.
    expect(afterOne.filter((name) => /old[34]$/.test(name))).toEqual([]);
    await engine.sweep(token);
    expect((await blobNames(fx, prefix)).map((name) => name.split('/').pop())).toEqual(['live0', 'live1']);
    // Nothing expired: a run removes nothing (one listing).
    await engine.sweep(token);
    expect(await blobNames(fx, prefix)).toHaveLength(2);
    fx.clock += lifetimeMs + 1;
    await engine.sweep(token);
    expect(await blobNames(fx, prefix)).toEqual([]);
  });

  it('remove nothing, and fail nothing, before any was recorded (no container yet)', async () => {
    expect(await markersOf().removeExpired(fx.clock, 10)).toBe(0);
  });
});
