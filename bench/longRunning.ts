/** The long-running section: status reads against Retry-After, and what a poller run costs with many orchestrations stored. */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { request } from 'undici';
import { defaultOrchestrationSettings, engineOnContainer } from '../src/orchestration';
import { OrchestrationIndex } from '../src/orchestration';
import type { OrchestrationState } from '../src/orchestration';
import { StorageBudget } from '../src/storage';
import { UpstreamClient } from '../src/upstream';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { startEmulator } from '../tools/emulator/emulatorServer';
import { startApp } from '../tools/harness/appProcess';
import { appEnv, groupBody, groupPath, median, results, round, rows, timeEach, token } from './benchKit';

export async function longRunning(azurite: RunningAzurite): Promise<void> {
  const durationMs = 5000;
  const retryAfterSeconds = 1;
  const emulator = await startEmulator({ token, lroDurationMs: durationMs, retryAfterSeconds });
  const app = await startApp(
    appEnv(emulator.url, azurite, { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', ORCHESTRATION_CONTAINER: 'bench-lro' }),
  );
  const count = 10;
  const started = await Promise.all(
    Array.from({ length: count }, async (_unused, index) => {
      const response = await request(`${app.url}/api/${groupPath(`lro-${index}`)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: groupBody,
      });
      await response.body.dump();
      return { id: response.headers['x-orchestration-id'] as string, startedAt: Date.now() };
    }),
  );
  const delays: number[] = [];
  for (const orchestration of started) {
    for (;;) {
      const status = (await (await request(`${app.url}/api/orchestrations/${orchestration.id}`)).body.json()) as {
        runtimeStatus: string;
        lastUpdatedTime: string;
      };
      if (status.runtimeStatus === 'Completed') {
        delays.push(Date.parse(status.lastUpdatedTime) - (orchestration.startedAt + durationMs));
        break;
      }
      await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    }
  }
  // Retry-After 1 s over a 5 s operation: reading faster than asked would take more than
  // 5 status reads (plus the final read of the resource).
  const allowedReads = Math.ceil(durationMs / (retryAfterSeconds * 1000));
  const statusReads = emulator.upstreamRequests({ method: 'GET', pathIncludes: '/operationResults/' }).length / count;
  const finalReads = emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/' }).length / count;
  results.longRunning = {
    orchestrations: count,
    operationDurationMs: durationMs,
    retryAfterSeconds,
    statusReadsAllowedAtMost: allowedReads,
    statusReadsPerOrchestration: statusReads,
    finalResourceReadsPerOrchestration: finalReads,
    completionDelayMedianMs: median(delays),
    completionDelayMaxMs: Math.max(...delays),
  };
  rows.push(
    {
      section: 'long-running',
      metric: `status reads per orchestration (${count}, 5 s operation, Retry-After 1 s)`,
      baseline: `${allowedReads} at most`,
      app: `${statusReads} (+${finalReads} final GET)`,
      difference: `x${round(statusReads / allowedReads)}`,
    },
    {
      section: 'long-running',
      metric: 'upstream done → app reports Completed',
      baseline: '0 ms ideal',
      app: `${median(delays)} ms median, ${Math.max(...delays)} ms max`,
      difference: `+${median(delays)} ms`,
    },
  );
  await app.stop();
  await emulator.close();
}

/**
 * One poller run with 0, 1,000 and 10,000 finished orchestrations stored beside 10 running
 * (none due): the index makes a run cost what is due, so the stored ones should not show.
 */
export async function pollerRun(azurite: RunningAzurite): Promise<void> {
  const emulator = await startEmulator({ token, lroSteps: 1_000_000, retryAfterSeconds: 3600 });
  const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
  const figures: Record<string, number> = {};
  const janitor: Record<string, { runsPerHour: number; medianMs: number }> = {};
  for (const finished of [0, 1000, 10_000]) {
    const container = blobs.getContainerClient(`bench-poller-${finished}-${randomUUID().slice(0, 6)}`);
    const engine = engineOnContainer(container, {
      storageTimeoutMs: 30_000,
      upstream: new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
      settings: defaultOrchestrationSettings,
      now: Date.now,
      log: () => undefined,
    });
    for (let index = 0; index < 10; index += 1) {
      const url = `${emulator.url}/${groupPath(`poller-${index}`)}`;
      const path = groupPath(`poller-${index}`).split('?')[0]!;
      await engine.start(
        { name: 'ContainerGroups_CreateOrUpdate', method: 'PUT', path, query: [['api-version', '2025-09-01']], bodyText: groupBody, resourceUrl: url },
        () =>
          new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).send({
            method: 'PUT',
            url,
            token,
            body: groupBody,
            headers: { 'content-type': 'application/json' },
          }),
      );
    }
    // Finished ones as the engine leaves them: the document, and its purge marked a week out.
    const index = new OrchestrationIndex(container, new StorageBudget(30_000, 'bench'));
    const time = new Date().toISOString();
    for (let batch = 0; batch < finished; batch += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, finished - batch) }, async () => {
          const id = randomUUID();
          const state: OrchestrationState = {
            id,
            name: 'ContainerGroups_CreateOrUpdate',
            runtimeStatus: 'Completed',
            input: { method: 'PUT', path: 'p', query: [] },
            requestKey: id,
            createdTime: time,
            lastUpdatedTime: time,
            endedTime: time,
          };
          await engine.store.create(state);
          await index.markExpiry(id, Date.now() + defaultOrchestrationSettings.retentionMs);
        }),
      );
    }
    // The janitor walks every document once an hour, a page per run: time those runs apart.
    const walk: number[] = [];
    for (let run = 0; run < 100; run += 1) {
      const started = process.hrtime.bigint();
      const result = await engine.sweep(token);
      if (result.janitorScanned === 0) break;
      walk.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const runs = await timeEach(7, async () => {
      await engine.sweep(token);
    });
    figures[finished] = round(median(runs), 1);
    janitor[finished] = { runsPerHour: walk.length, medianMs: walk.length > 0 ? round(median(walk), 1) : 0 };
  }
  results.pollerRun = { running: 10, medianMsByFinishedStored: figures, janitorWalkByFinishedStored: janitor };
  for (const finished of [1000, 10_000]) {
    rows.push({
      section: 'long-running',
      metric: `poller run, 10 running + ${finished.toLocaleString('en')} finished stored (median of 7)`,
      baseline: `${figures[0]} ms with 0 finished`,
      app: `${figures[finished]} ms`,
      difference: `x${round(figures[finished]! / figures[0]!)}`,
    });
  }
  rows.push({
    section: 'long-running',
    metric: 'janitor walk of 10,000 stored (once an hour, a page per run)',
    baseline: `${figures[10_000]} ms a run without it`,
    app: `${janitor[10_000]!.runsPerHour} runs of ${janitor[10_000]!.medianMs} ms`,
    difference: `+${round(janitor[10_000]!.medianMs - figures[10_000]!)} ms in those runs`,
  });
  await emulator.close();
}
