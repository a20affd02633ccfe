/**
 * The poller against a burst (`npm run bench -- pollerBurst`, bench/pollerBurst.ts): `count`
 * container group starts due at once, their upstream finishing on the first status read
 * (`Retry-After: 1`), worked off by poller runs made back to back, each as long as a run may be
 * (`ORCHESTRATION_RUN_MAX_SECONDS`), as one instance's timer would make them (a run that
 * overruns is followed at once).
 * Storage is counted at the client (outside the SDK's retries): per start, per poll that ends
 * the operation, and per poll that goes on (a second, smaller set whose upstream answers
 * "running" once). Bounded in count and in time: a work-off that passes `maxWorkOffMs` stops
 * and says how far it got.
 */
import { randomUUID } from 'node:crypto';
import { defaultOrchestrationSettings, engineOnContainer, type OrchestrationEngine, type StartRequest } from '../src/orchestration';
import { UpstreamClient, type UpstreamResponse } from '../src/upstream';
import { countingStorage, type CountingStorage } from '../tools/harness/countingStorage';
import { cpuMs } from '../tools/harness/processStats';

export interface BurstOptions {
  connectionString: string;
  /** Azurite's process, to count its CPU too. */
  storagePid?: number;
  /** Upstream finishing on the first status read; and one answering "running" once first. */
  finishingUrl: string;
  goingOnUrl: string;
  token: string;
  count: number;
  maxWorkOffMs: number;
}

export interface BurstFigures {
  orchestrations: number;
  pollConcurrency: number;
  startsPerSecond: number;
  workOffMs: number;
  orchestrationsPerSecond: number;
  runs: number;
  runsThatOverran: number;
  /** This process's CPU (the engine, its storage and upstream clients) per orchestration worked off: the rate one free core would allow is 1000 / this. */
  engineCpuMsPerOrchestration: number;
  storageCpuMsPerOrchestration?: number;
  /** Azurite's CPU over the work-off's wall time: near 100 %, storage is what sets the rate. */
  storageBusyPercent?: number;
  completed: number;
  /** A start answered "accepted" (followed by polls), and one answered final at once. */
  storageRequestsPerStart: number;
  storageRequestsPerFinalStart: number;
  /** A poll that ends the operation, then one that goes on; the run's own listings left out, then counted in. */
  storageRequestsPerEndingPoll: number;
  storageRequestsPerEndingPollWithRunOverhead: number;
  storageRequestsPerGoingOnPoll: number;
}

const subscription = '00000000-0000-0000-0000-000000000000';
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
const round = (value: number, digits = 2) => Number(value.toFixed(digits));
/** The run's own requests (listings, the janitor's cursor): what is left is what orchestrations cost. */
const perOrchestration = (lines: readonly string[]) => lines.filter((line) => !line.includes('comp=list') && !line.endsWith('/janitor.json'));

function engineOn(storage: CountingStorage, baseUrl: string): OrchestrationEngine {
  return engineOnContainer(storage.service.getContainerClient(`bench-burst-${randomUUID().slice(0, 8)}`), {
    storageTimeoutMs: 30_000,
    upstream: new UpstreamClient({ baseUrl, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    settings: defaultOrchestrationSettings,
    now: Date.now,
    log: () => undefined,
  });
}

function groupStart(baseUrl: string, name: string): StartRequest {
  const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}`;
  return {
    name: 'ContainerGroups_CreateOrUpdate',
    method: 'PUT',
    path,
    query: [['api-version', '2025-09-01']],
    bodyText: groupBody,
    resourceUrl: `${baseUrl}/${path}?api-version=2025-09-01`,
  };
}

/** An upstream answer that is final at once (a resource created synchronously). */
const finalAtOnce = async (): Promise<UpstreamResponse> => ({
  status: 200,
  headers: {},
  bodyText: '{"properties":{"provisioningState":"Succeeded"}}',
  attempts: 1,
});

/** Starts `count` orchestrations, 32 at once (a script starting many), and answers the time it took. */
async function startMany(
  engine: OrchestrationEngine,
  baseUrl: string,
  token: string,
  count: number,
  prefix: string,
  answered?: () => Promise<UpstreamResponse>,
): Promise<number> {
  const upstream = new UpstreamClient({ baseUrl, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
  const startedAt = Date.now();
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) {
      const start = groupStart(baseUrl, `${prefix}-${index}`);
      await engine.start(
        start,
        answered ?? (() => upstream.send({ method: 'PUT', url: start.resourceUrl, token, body: groupBody, headers: { 'content-type': 'application/json' } })),
      );
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return Date.now() - startedAt;
}

/** ORCHESTRATION_RUN_MAX_SECONDS's default, as the poller timer passes it. */
const runMaxMs = 60_000;

/** Poller runs back to back until nothing is due, or `maxMs` passed, each as long as the app allows one (ORCHESTRATION_RUN_MAX_SECONDS). */
async function workOff(engine: OrchestrationEngine, token: string, maxMs: number) {
  const startedAt = Date.now();
  let runs = 0;
  let overran = 0;
  for (;;) {
    const result = await engine.sweep(token, 0, runMaxMs);
    runs += 1;
    // Against a schedule of every second, as in the app bench.
    if (result.durationMs >= 1000 || result.deferred > 0) overran += 1;
    if (result.due === 0 || Date.now() - startedAt > maxMs) break;
  }
  return { ms: Date.now() - startedAt, runs, overran };
}

export async function burst(options: BurstOptions): Promise<BurstFigures> {
  const { token, count } = options;
  const storage = countingStorage(options.connectionString);

  const engine = engineOn(storage, options.finishingUrl);
  await engine.store.ensureReady();
  await engine.sweep(token); // the janitor's first turn, on an empty store
  storage.reset();
  const startsMs = await startMany(engine, options.finishingUrl, token, count, 'burst');
  const perStart = storage.requests.length / count;
  // All due: the last start's first poll falls due a second after it.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  storage.reset();
  const cpuBefore = process.cpuUsage();
  const storageCpuBefore = options.storagePid === undefined ? 0 : cpuMs(options.storagePid);
  const run = await workOff(engine, token, options.maxWorkOffMs);
  const cpu = process.cpuUsage(cpuBefore);
  const storageCpu = options.storagePid === undefined ? undefined : cpuMs(options.storagePid) - storageCpuBefore;
  const workOffRequests = [...storage.requests];
  const completed = (await engine.query({ statuses: ['Completed'], top: count, maxScanned: 10 * count, timeBudgetMs: 30_000 })).summaries.length;

  // Polls that go on: the upstream answers "running" once, so the first poll of each is one.
  const goingOn = engineOn(storage, options.goingOnUrl);
  const goingOnCount = Math.min(100, count);
  await goingOn.store.ensureReady();
  await goingOn.sweep(token);
  await startMany(goingOn, options.goingOnUrl, token, goingOnCount, 'going-on');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  storage.reset();
  const goingOnRun = await goingOn.sweep(token);
  const goingOnRequests = [...storage.requests];
  storage.reset();
  await startMany(goingOn, options.goingOnUrl, token, goingOnCount, 'final', finalAtOnce);
  const perFinalStart = storage.requests.length / goingOnCount;

  return {
    orchestrations: count,
    pollConcurrency: defaultOrchestrationSettings.pollConcurrency,
    startsPerSecond: round(count / (startsMs / 1000), 1),
    workOffMs: run.ms,
    orchestrationsPerSecond: round(completed / (run.ms / 1000), 1),
    runs: run.runs,
    runsThatOverran: run.overran,
    engineCpuMsPerOrchestration: round((cpu.user + cpu.system) / 1000 / Math.max(1, completed)),
    storageCpuMsPerOrchestration: storageCpu === undefined ? undefined : round(storageCpu / Math.max(1, completed)),
    storageBusyPercent: storageCpu === undefined ? undefined : round((100 * storageCpu) / run.ms, 0),
    completed,
    storageRequestsPerStart: round(perStart),
    storageRequestsPerFinalStart: round(perFinalStart),
    storageRequestsPerEndingPoll: round(perOrchestration(workOffRequests).length / completed),
    storageRequestsPerEndingPollWithRunOverhead: round(workOffRequests.length / completed),
    storageRequestsPerGoingOnPoll: round(perOrchestration(goingOnRequests).length / Math.max(1, goingOnRun.polled)),
  };
}
