/** The burst section: 1,000 starts due at once, worked off by the engine (bench/burst.ts) and through the app. */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { azuriteConnectionString, type RunningAzurite } from '../tools/embeddedAzurite';
import { startApp } from '../tools/harness/appProcess';
import { startCountingStorageProxy } from '../tools/harness/countingStorage';
import { appEnv, groupBody, groupPath, results, round, rows, spawnAzurite, spawnEmulator, token } from './benchKit';
import { burst } from './burst';

/**
 * 1,000 container group starts due at once, worked off by one instance's poller (bench/burst.ts),
 * each emulator in a process of its own: one finishing on the first status read, one answering
 * "running" once first (for what a poll that goes on costs).
 */
export async function pollerBurst(): Promise<void> {
  const finishing = await spawnEmulator({ EMULATOR_LRO_STEPS: '1' });
  const goingOn = await spawnEmulator({ EMULATOR_LRO_STEPS: '2' });
  // An Azurite of its own for each burst: Azurite's in-memory table scans every blob it holds on
  // each request (LokiJS's find and $eq took half of its CPU in a profile of the burst), so the
  // 11,000 blobs of the sections before would slow it; an Azure Storage account's other blobs
  // do not slow a request by name.
  const azurite = await spawnAzurite();
  const appAzurite = await spawnAzurite();
  try {
    const figures = await burst({
      connectionString: azurite.connectionString,
      storagePid: azurite.pid,
      finishingUrl: finishing.url,
      goingOnUrl: goingOn.url,
      token,
      count: 1000,
      maxWorkOffMs: 120_000,
    });
    results.pollerBurst = figures;
    await azurite.close();
    await pollerBurstThroughApp(appAzurite, finishing.url);
    rows.push(
      {
        section: 'long-running',
        metric: `${figures.orchestrations.toLocaleString('en')} starts due at once, worked off by one instance (${figures.pollConcurrency} at once)`,
        baseline: '100 orchestrations/s target',
        app: `${figures.orchestrationsPerSecond} orchestrations/s (${figures.completed} in ${figures.workOffMs} ms, ${figures.runs} runs; CPU each: ${figures.engineCpuMsPerOrchestration} ms app, ${figures.storageCpuMsPerOrchestration} ms Azurite, Azurite busy ${figures.storageBusyPercent} % of the time)`,
        difference: `x${round(figures.orchestrationsPerSecond / 100)}`,
      },
      {
        section: 'long-running',
        metric: 'storage requests per start: accepted / final at once',
        baseline: '4 / 5 target',
        app: `${figures.storageRequestsPerStart} / ${figures.storageRequestsPerFinalStart}`,
        difference: `${round(figures.storageRequestsPerStart - 4)} / ${round(figures.storageRequestsPerFinalStart - 5)}`,
      },
      {
        section: 'long-running',
        metric: "storage requests per poll: goes on / ends (with the runs' listings)",
        baseline: '3 target (goes on)',
        app: `${figures.storageRequestsPerGoingOnPoll} / ${figures.storageRequestsPerEndingPoll} (${figures.storageRequestsPerEndingPollWithRunOverhead})`,
        difference: `${round(figures.storageRequestsPerGoingOnPoll - 3)} (goes on)`,
      },
    );
  } finally {
    finishing.child.kill('SIGTERM');
    goingOn.child.kill('SIGTERM');
    await azurite.close();
    await appAzurite.close();
  }
}

/**
 * The same burst through the app, as a script would make it: 1,000 PUTs to the local host, the
 * poller timer every second, storage behind a counting proxy. The rate is the orchestrations
 * over the time from the first PUT to the last Completed (starting them included).
 */
async function pollerBurstThroughApp(azurite: RunningAzurite, emulatorUrl: string): Promise<void> {
  const count = 1000;
  const storage = new URL(azurite.connectionString.split('BlobEndpoint=')[1]!.replace(/;$/, ''));
  const proxy = await startCountingStorageProxy({ host: storage.hostname, port: Number(storage.port) });
  const app = await startApp(
    appEnv(
      emulatorUrl,
      { connectionString: azuriteConnectionString(`${proxy.origin}${storage.pathname}`) },
      { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', ORCHESTRATION_CONTAINER: `bench-burst-app-${randomUUID().slice(0, 6)}` },
    ),
  );
  try {
    const startedAt = Date.now();
    let next = 0;
    const starter = async () => {
      for (let index = next++; index < count; index = next++) {
        const response = await request(`${app.url}/api/${groupPath(`burst-app-${index}`)}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: groupBody,
        });
        await response.body.dump();
      }
    };
    await Promise.all(Array.from({ length: 32 }, starter));
    const startsMs = Date.now() - startedAt;
    // Each orchestration ends on its first poll: the poller's own log lines count them, so
    // watching costs storage nothing.
    const sweeps = () =>
      app.lines
        .filter((line) => line.includes('"event":"sweep"'))
        .map((line) => JSON.parse(line.slice(line.indexOf('{'))) as { polled: number; deferred?: number; overran?: boolean });
    const polled = () => sweeps().reduce((sum, sweep) => sum + sweep.polled, 0);
    const deadline = Date.now() + 180_000;
    while (polled() < count && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    const ms = Date.now() - startedAt;
    const runs = sweeps();
    const running = count - polled();
    const figures = {
      orchestrations: count,
      startsMs,
      workedOffMs: ms,
      left: running,
      orchestrationsPerSecond: round((count - running) / (ms / 1000), 1),
      runs: runs.length,
      runsThatOverran: runs.filter((run) => run.overran).length,
      storageRequests: proxy.requests.length,
    };
    results.pollerBurstThroughApp = figures;
    rows.push({
      section: 'long-running',
      metric: `${count.toLocaleString('en')} container group PUTs through the app, poller every second`,
      baseline: '100 orchestrations/s target',
      app: `${figures.orchestrationsPerSecond} orchestrations/s (PUTs took ${startsMs} ms, all ended at ${ms} ms, ${figures.runs} runs, ${figures.runsThatOverran} overran${running > 0 ? `, ${running} left` : ''})`,
      difference: `x${round(figures.orchestrationsPerSecond / 100)}`,
    });
  } finally {
    await app.stop();
    await proxy.close();
  }
}
