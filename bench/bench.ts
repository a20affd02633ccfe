/**
 * `npm run bench`: every figure is a ratio or difference against a baseline measured in the
 * same run (DEVELOPERS.md, Standards). Starts what it needs (emulator processes, Azurite, the
 * built app through the local host), prints a table, writes bench/results.json, stops all.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import Module from 'node:module';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { BlobServiceClient } from '@azure/storage-blob';
import { Agent, request } from 'undici';
import { burst } from './burst';
import { CertificateRefresher } from '../src/certificates/certificateRefresher';
import { CertificateStore } from '../src/certificates/certificateStore';
import { DistributedRateLimiter } from '../src/certificates/rateLimiter';
import { defaultOrchestrationSettings, engineOnContainer } from '../src/orchestration/orchestrationEngine';
import { OrchestrationIndex } from '../src/orchestration/orchestrationIndex';
import type { OrchestrationState } from '../src/orchestration/orchestrationState';
import { StorageBudget } from '../src/storage/storageBudget';
import { UpstreamClient } from '../src/upstream/upstreamClient';
import { resetConfigForTests } from '../src/config';
import { flushSpans, pauseTelemetry, startTelemetry, stopTelemetry } from '../src/telemetry/telemetry';
import { azuriteConnectionString, startAzurite, type RunningAzurite } from '../tools/embeddedAzurite';
import { installFunctionsCore } from '../tools/localHost/installCore';
import { startEmulator } from '../test/emulator/emulatorServer';
import { startApp, type AppProcess } from '../test/helpers/appProcess';
import { startCountingStorageProxy } from '../test/helpers/countingStorage';
import { residentBytes } from '../test/helpers/processStats';

const root = resolve(__dirname, '..', '..');
const token = 'emulator-token';
const subscription = '00000000-0000-0000-0000-000000000000';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const groupPath = (name: string) => `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });

interface Row {
  section: string;
  metric: string;
  baseline: string;
  app: string;
  difference: string;
}
const rows: Row[] = [];
const results: Record<string, unknown> = {};

const round = (value: number, digits = 2) => Number(value.toFixed(digits));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const median = (values: number[]) => percentile(values, 50);

async function timeEach(count: number, call: (index: number) => Promise<void>): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = process.hrtime.bigint();
    await call(index);
    durations.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return durations;
}

/** What a child writes to stderr, its last 16 KiB, to show when it fails. */
function keptErrorOutput(child: ChildProcess): () => string {
  let kept = '';
  child.stderr!.on('data', (chunk: Buffer) => (kept = (kept + chunk.toString('utf8')).slice(-16_384)));
  return () => kept;
}

/**
 * `node ...args` in a process of its own, once it prints `<name> listening on <url>`; `stdin`
 * 'pipe' ties its life to this process's (the child ends when the pipe does).
 */
async function spawnListening(
  name: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: 'ignore' | 'pipe' } = {},
): Promise<{ url: string; child: ChildProcess }> {
  // The child's warnings are kept and shown only if it fails: a bench starts many processes.
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'] });
  const errors = keptErrorOutput(child);
  const announcement = new RegExp(`${name} listening on (\\S+)`);
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = announcement.exec(chunk.toString());
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${errors()}`)));
  });
  return { url, child };
}

/** An emulator in its own process, so the load generator does not share its event loop. */
function spawnEmulator(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  return spawnListening('Emulator', [resolve(root, 'dist', 'bench', 'emulator.js')], { env });
}

function appEnv(emulatorUrl: string, azurite: Pick<RunningAzurite, 'connectionString'>, extra: Record<string, string> = {}): Record<string, string> {
  return {
    MANAGEMENT_BASE_URL: emulatorUrl,
    LIFECYCLE_BASE_URL: emulatorUrl,
    UPSTREAM_AUTH: 'static',
    UPSTREAM_STATIC_TOKEN: token,
    AzureWebJobsStorage: azurite.connectionString,
    // Background polling would only add noise to these measurements.
    ORCHESTRATION_POLL_SCHEDULE: '0 0 0 1 1 *',
    ...extra,
  };
}

/**
 * CPU the handler spends per call: process.cpuUsage over `calls` in-process handler calls less
 * the same number of direct undici calls (the emulator runs in its own process, so only this
 * process's side of each call counts). Requests are built before the clock starts: building
 * them is the worker's work, not the app's. The median of a few rounds, as the machine is shared.
 * `afterRound`, when given, is timed apart after each round (per call of the round); the first
 * `warmUpRounds` rounds are run and not counted.
 */
/** A full collection now (V8's `gc`, exposed to this process once, when first asked for). */
function collectGarbage(): void {
  collector ??= (() => {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  })();
  collector();
}
let collector: (() => void) | undefined;

/** CPU microseconds `work` takes, its garbage collected within the count (what the next work would otherwise pay) unless told not to. */
async function cpuMicrosOf(work: () => Promise<void>, { collect = true } = {}): Promise<number> {
  const before = process.cpuUsage();
  await work();
  if (collect) collectGarbage();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

const callsARound = 2000;

/**
 * A round of calls: CPU per call. Each round collects its own garbage before its CPU is read:
 * otherwise what one round left is collected in whichever round follows (a direct round, which
 * is subtracted), and figures move by a third from run to run with where collections fall.
 */
async function cpuPerCallOfRound(run: (index: number) => Promise<void>): Promise<number> {
  const micros = await cpuMicrosOf(async () => {
    for (let index = 0; index < callsARound; index += 1) await run(index);
  });
  return micros / callsARound;
}

/**
 * A round of calls made in batches: `between` runs after each batch outside the calls' count
 * (its CPU is returned apart). The calls' garbage is collected within their count at the end,
 * as in cpuPerCallOfRound, then the last `between`'s within its own; what an earlier `between`
 * left is collected during the calls that follow it, so the calls' figure errs high, not low.
 */
async function cpuPerCallInBatches(run: (index: number) => Promise<void>, batch: number, between: () => Promise<void>): Promise<{ perCall: number; betweenPerCall: number }> {
  let calls = 0;
  let betweenMicros = 0;
  for (let start = 0; start < callsARound; start += batch) {
    const last = start + batch >= callsARound;
    calls += await cpuMicrosOf(async () => {
      for (let index = start; index < Math.min(start + batch, callsARound); index += 1) await run(index);
    }, { collect: last });
    betweenMicros += await cpuMicrosOf(between, { collect: last });
  }
  return { perCall: calls / callsARound, betweenPerCall: betweenMicros / callsARound };
}

async function handlerCpuPerCall<Request>(direct: () => Promise<void>, build: () => Request, handle: (request: Request) => Promise<void>) {
  const rounds = 5;
  const directRounds: number[] = [];
  const inProcessRounds: number[] = [];
  for (let done = 0; done < rounds; done += 1) {
    directRounds.push(await cpuPerCallOfRound(direct));
    const requests = Array.from({ length: callsARound }, build);
    inProcessRounds.push(await cpuPerCallOfRound((index) => handle(requests[index]!)));
  }
  const directMicros = Math.round(median(directRounds));
  const inProcessMicros = Math.round(median(inProcessRounds));
  // Each round's handler less its own direct calls, made just before: the machine's load moves
  // between rounds more than the handler's cost does.
  const pairedHandlerMicros = Math.round(median(inProcessRounds.map((micros, index) => micros - directRounds[index]!)));
  return { calls: callsARound, rounds, directMicros, inProcessMicros, handlerMicros: inProcessMicros - directMicros, pairedHandlerMicros };
}

async function addedLatency(emulatorUrl: string, app: AppProcess, azurite: RunningAzurite): Promise<void> {
  const iterations = 300;
  const dispatcher = new Agent({ connections: 1 });
  const direct = (path: string, init: { method?: string; body?: string } = {}) => async () => {
    const response = await request(`${emulatorUrl}/${path}`, { dispatcher, method: (init.method ?? 'GET') as 'GET', body: init.body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    await response.body.dump();
  };
  const viaApp = (path: string, init: { method?: string; body?: string } = {}) => async () => {
    const response = await request(`${app.url}/api/${path}`, { dispatcher, method: (init.method ?? 'GET') as 'GET', body: init.body, headers: { 'content-type': 'application/json' } });
    await response.body.dump();
  };

  // In-process: the handler invoked directly, with the real registrations. Their log lines
  // would only interleave with the table.
  installFunctionsCore();
  const print = console.log;
  console.log = () => undefined;
  Object.assign(process.env, appEnv(emulatorUrl, azurite));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { operationHandlers } = require('../functions/operations') as typeof import('../functions/operations');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { HttpRequest, InvocationContext } = require('@azure/functions') as typeof import('@azure/functions');
  const context = () => new InvocationContext({ functionName: 'bench', logHandler: () => undefined });
  const inProcess = (name: string, path: string, params: Record<string, string>, init: { method?: string; body?: string } = {}) => async () => {
    const url = new URL(`http://127.0.0.1/api/${path}`);
    await operationHandlers[name]!(new HttpRequest({ method: init.method ?? 'GET', url: url.toString(), params, headers: { 'content-type': 'application/json' }, body: init.body ? { string: init.body } : undefined }), context());
  };

  const cases = [
    {
      name: 'usages (GET list)',
      direct: direct(usagesPath),
      app: viaApp(usagesPath),
      inProcess: inProcess('location-listUsage', usagesPath, { subscriptionId: subscription, location: 'westus' }),
    },
    {
      name: 'container group PUT',
      direct: (index: number) => direct(groupPath(`direct-${index}`), { method: 'PUT', body: groupBody })(),
      app: (index: number) => viaApp(groupPath(`app-${index}`), { method: 'PUT', body: groupBody })(),
      inProcess: (index: number) => inProcess('containerGroups-createOrUpdate', groupPath(`inproc-${index}`), { subscriptionId: subscription, resourceGroupName: 'rg', containerGroupName: `inproc-${index}` }, { method: 'PUT', body: groupBody })(),
    },
  ];
  const latency: Record<string, unknown> = {};
  for (const entry of cases) {
    for (const run of [entry.direct, entry.app, entry.inProcess]) await timeEach(30, run as (index: number) => Promise<void>); // warm-up
    const directMs = await timeEach(iterations, entry.direct as (index: number) => Promise<void>);
    const httpMs = await timeEach(iterations, entry.app as (index: number) => Promise<void>);
    const inProcessMs = await timeEach(iterations, entry.inProcess as (index: number) => Promise<void>);
    const figures = {
      directMedianMs: round(median(directMs)),
      directP99Ms: round(percentile(directMs, 99)),
      httpAddedMedianMs: round(median(httpMs) - median(directMs)),
      httpAddedP99Ms: round(percentile(httpMs, 99) - percentile(directMs, 99)),
      inProcessAddedMedianMs: round(median(inProcessMs) - median(directMs)),
      inProcessAddedP99Ms: round(percentile(inProcessMs, 99) - percentile(directMs, 99)),
    };
    latency[entry.name] = figures;
    rows.push(
      { section: 'added latency', metric: `${entry.name}, in-process, median / p99`, baseline: `${figures.directMedianMs} / ${figures.directP99Ms} ms direct`, app: `${round(median(inProcessMs))} / ${round(percentile(inProcessMs, 99))} ms`, difference: `+${figures.inProcessAddedMedianMs} / +${figures.inProcessAddedP99Ms} ms` },
      { section: 'added latency', metric: `${entry.name}, over HTTP, median / p99`, baseline: `${figures.directMedianMs} / ${figures.directP99Ms} ms direct`, app: `${round(median(httpMs))} / ${round(percentile(httpMs, 99))} ms`, difference: `+${figures.httpAddedMedianMs} / +${figures.httpAddedP99Ms} ms` },
    );
  }
  // A tracked start (the orchestration written before the answer) against an untracked call.
  const tracked = latency['container group PUT'] as { inProcessAddedMedianMs: number };
  const untracked = latency['usages (GET list)'] as { inProcessAddedMedianMs: number };
  rows.push({
    section: 'added latency',
    metric: 'tracked PUT over untracked GET, in-process, median',
    baseline: `+${untracked.inProcessAddedMedianMs} ms GET`,
    app: `+${tracked.inProcessAddedMedianMs} ms PUT`,
    difference: `+${round(tracked.inProcessAddedMedianMs - untracked.inProcessAddedMedianMs)} ms`,
  });
  // What a tracked start waits on: two rounds of two conditional blob writes made together.
  const storageRoundMs = median(await storageRoundTimes(azurite, iterations));
  rows.push({
    section: 'added latency',
    metric: 'the same, in rounds of two conditional blob writes to Azurite made together (median)',
    baseline: `${round(storageRoundMs)} ms a round`,
    app: `+${round(tracked.inProcessAddedMedianMs - untracked.inProcessAddedMedianMs)} ms PUT`,
    difference: `x${round((tracked.inProcessAddedMedianMs - untracked.inProcessAddedMedianMs) / storageRoundMs)} rounds`,
  });
  const handlerCpu = await handlerCpuPerCall(
    direct(usagesPath),
    () => new HttpRequest({ method: 'GET', url: `http://127.0.0.1/api/${usagesPath}`, params: { subscriptionId: subscription, location: 'westus' }, headers: { 'content-type': 'application/json' } }),
    (request) => operationHandlers['location-listUsage']!(request, context()).then(() => undefined),
  );
  rows.push({
    section: 'added latency',
    metric: `handler CPU per GET list, in-process (${handlerCpu.calls} calls, median of ${handlerCpu.rounds})`,
    baseline: `${handlerCpu.directMicros} µs a direct undici call`,
    app: `${handlerCpu.inProcessMicros} µs`,
    difference: `+${handlerCpu.handlerMicros} µs`,
  });
  results.addedLatency = { iterations, ...latency, trackedOverUntrackedMs: round(tracked.inProcessAddedMedianMs - untracked.inProcessAddedMedianMs), storageRoundMs: round(storageRoundMs), handlerCpu };
  console.log = print;
  await dispatcher.close();
}

/**
 * What exporting telemetry costs a GET's handler: its CPU per call (its upstream call included,
 * as in the "added latency" section), and what it adds to a direct undici call, with traces
 * and metrics exported over OTLP (http/protobuf, every trace kept) to a collector in
 * a process of its own that only answers 200, against the same calls with telemetry paused, in
 * rounds alternated in one process (separate processes differ by more than the cost measured).
 * The handler's figure is its work on the call's path; the batch export (encoding the spans and
 * sending them, done by the batch processor when a batch is full or on a timer) is counted
 * apart: the bench sends each default batch's worth itself, between the calls' counts.
 * Run last: the SDK, once set up, stays for the rest of the process.
 */
async function telemetryCost(azurite: RunningAzurite): Promise<void> {
  const emulator = await spawnEmulator({});
  const collectorScript = `require('node:http').createServer((incoming, outgoing) => { incoming.resume(); incoming.on('end', () => outgoing.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); })
    .listen(0, '127.0.0.1', function () { console.log('Collector listening on http://127.0.0.1:' + this.address().port); });`;
  const collector = await spawnListening('Collector', ['-e', collectorScript]);
  installFunctionsCore();
  const print = console.log;
  console.log = () => undefined;
  try {
    // The batch processor's own settings (read by the SDK): nothing sent but when the bench
    // sends it (below, a default batch's worth at a time).
    const held = String(2 * callsARound + 100);
    Object.assign(process.env, appEnv(emulator.url, azurite), { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_BSP_MAX_QUEUE_SIZE: held, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: held, OTEL_BSP_SCHEDULE_DELAY: '3600000' });
    resetConfigForTests();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { operationHandlers } = require('../functions/operations') as typeof import('../functions/operations');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { HttpRequest, InvocationContext } = require('@azure/functions') as typeof import('@azure/functions');
    const dispatcher = new Agent({ connections: 1 });
    const direct = async () => {
      const response = await request(`${emulator.url}/${usagesPath}`, { dispatcher, headers: { authorization: `Bearer ${token}` } });
      await response.body.dump();
    };
    const build = () => new HttpRequest({ method: 'GET', url: `http://127.0.0.1/api/${usagesPath}`, params: { subscriptionId: subscription, location: 'westus' }, headers: { 'content-type': 'application/json' } });
    const handle = (call: InstanceType<typeof HttpRequest>) => operationHandlers['location-listUsage']!(call, new InvocationContext({ functionName: 'bench', logHandler: () => undefined })).then(() => undefined);
    startTelemetry();
    // Rounds go on getting cheaper for the first few thousand calls: the first pairs are not counted.
    const warmUpPairs = 2;
    const pairs = 15;
    const rounds = { off: { direct: [] as number[], handler: [] as number[] }, on: { direct: [] as number[], handler: [] as number[] } };
    // The batch processor sends 512 spans at a time by default (OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
    // two a call: the spans are held that long, no longer. Held for a whole round, every span
    // outlived the young generation and was promoted (6 points on Node 22, against none held).
    const callsABatch = 512 / 2;
    const exportMicros: number[] = [];
    for (let pair = 0; pair < warmUpPairs + pairs; pair += 1) {
      // Which goes first alternates, so neither is favoured by the heap's growth or the load.
      for (const exporting of pair % 2 === 0 ? [false, true] : [true, false]) {
        pauseTelemetry(!exporting);
        const measured = exporting ? rounds.on : rounds.off;
        measured.direct.push(await cpuPerCallOfRound(direct));
        const requests = Array.from({ length: callsARound }, build);
        const round = await cpuPerCallInBatches((index) => handle(requests[index]!), callsABatch, flushSpans);
        measured.handler.push(round.perCall);
        // What the round's batches cost to send, off the calls' path, per call of the round.
        if (exporting) exportMicros.push(round.betweenPerCall);
      }
    }
    await stopTelemetry();
    await dispatcher.close();
    const counted = (values: number[]) => values.slice(warmUpPairs);
    // The pairs' rounds ran side by side: the growth of each pair, then their median.
    const growthOf = (off: number[], on: number[]) => round(median(on.map((micros, index) => (100 * (micros - off[index]!)) / off[index]!)), 1);
    // The handler's CPU per GET, its upstream call included: what the "added latency" section calls it.
    const wholeOff = counted(rounds.off.handler);
    const wholeOn = counted(rounds.on.handler);
    const wholeOffMicros = Math.round(median(wholeOff));
    const wholeOnMicros = Math.round(median(wholeOn));
    const growth = growthOf(wholeOff, wholeOn);
    // What the gateway adds to a direct call: each round's handler less its own direct calls, made just before it.
    const addedOf = (side: { direct: number[]; handler: number[] }) => counted(side.handler).map((micros, index) => micros - counted(side.direct)[index]!);
    const offAdded = addedOf(rounds.off);
    const onAdded = addedOf(rounds.on);
    const offMicros = Math.round(median(offAdded));
    const onMicros = Math.round(median(onAdded));
    const addedGrowth = growthOf(offAdded, onAdded);
    const exportPerCall = round(median(counted(exportMicros)), 1);
    const withExport = round((100 * (wholeOnMicros + exportPerCall - wholeOffMicros)) / wholeOffMicros, 1);
    const directOff = Math.round(median(counted(rounds.off.direct)));
    const directOn = Math.round(median(counted(rounds.on.direct)));
    const signed = (value: number) => `${value >= 0 ? '+' : ''}${value}`;
    rows.push(
      {
        section: 'telemetry',
        metric: `handler CPU per GET list, in-process, OTLP export on (${callsARound} calls a round; median of ${pairs} pairs of rounds alternated in one process, after ${warmUpPairs} not counted)`,
        baseline: `${wholeOffMicros} µs export off`,
        app: `${wholeOnMicros} µs export on`,
        difference: `${signed(growth)} %`,
      },
      {
        section: 'telemetry',
        metric: 'the same plus the batch export (encoding, sending), off the calls\' path, per call',
        baseline: `${wholeOffMicros} µs export off`,
        app: `${wholeOnMicros} + ${exportPerCall} µs`,
        difference: `${signed(withExport)} %`,
      },
      {
        section: 'telemetry',
        metric: 'what the handler adds to a direct undici call (each round less its own direct calls)',
        baseline: `${offMicros} µs export off`,
        app: `${onMicros} µs export on`,
        difference: `${signed(addedGrowth)} %`,
      },
      {
        section: 'telemetry',
        metric: 'a direct undici call, export off and on',
        baseline: `${directOff} µs export off`,
        app: `${directOn} µs export on`,
        difference: `${signed(directOn - directOff)} µs`,
      },
    );
    results.telemetry = { calls: callsARound, pairs, handlerOffMicros: wholeOffMicros, handlerOnMicros: wholeOnMicros, handlerCpuGrowthPercent: growth, exportMicrosPerCall: exportPerCall, withExportGrowthPercent: withExport, addedOffMicros: offMicros, addedOnMicros: onMicros, addedGrowthPercent: addedGrowth, directOffMicros: directOff, directOnMicros: directOn };
  } finally {
    console.log = print;
    collector.child.kill('SIGTERM');
    emulator.child.kill('SIGTERM');
  }
}

/**
 * Times of `count` rounds of two conditional creates of a small blob made together, one round
 * after another: a start's round before the upstream call (its document and its request key).
 */
async function storageRoundTimes(azurite: RunningAzurite, count: number): Promise<number[]> {
  const container = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient('bench-writes');
  await container.createIfNotExists();
  const body = JSON.stringify({ id: randomUUID(), input: groupBody });
  const create = () => container.getBlockBlobClient(randomUUID()).upload(body, body.length, { conditions: { ifNoneMatch: '*' } });
  return timeEach(count, async () => {
    await Promise.all([create(), create()]);
  });
}

async function throughput(azurite: RunningAzurite): Promise<void> {
  const figures: Record<string, unknown>[] = [];
  for (const latencyMs of [0, 50]) {
    const emulator = await spawnEmulator({ EMULATOR_LATENCY_MS: String(latencyMs) });
    const app = await startApp(appEnv(emulator.url, azurite));
    for (const connections of [1, 16, 32, 64]) {
      const measure = async (url: string, headers: Record<string, string>) => {
        const result = await autocannon({ url, connections, duration: 3, headers });
        return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, errors: result.errors + result.non2xx };
      };
      const direct = await measure(`${emulator.url}/${usagesPath}`, { authorization: `Bearer ${token}` });
      const viaApp = await measure(`${app.url}/api/${usagesPath}`, {});
      const ratio = round(viaApp.requestsPerSecond / direct.requestsPerSecond);
      figures.push({ upstreamLatencyMs: latencyMs, connections, direct, app: viaApp, ratio });
      rows.push({
        section: 'throughput',
        metric: `usages, ${connections} callers, upstream +${latencyMs} ms`,
        baseline: `${Math.round(direct.requestsPerSecond)} req/s direct`,
        app: `${Math.round(viaApp.requestsPerSecond)} req/s (${viaApp.errors} errors)`,
        difference: `x${ratio}`,
      });
    }
    if (latencyMs === 0) figures.push(await bareProxyCeiling(emulator.url, figures.find((figure) => figure.connections === 32)!));
    await app.stop();
    emulator.child.kill('SIGTERM');
  }
  results.throughput = figures;
}

/**
 * What any server between the caller and the upstream costs on this machine: a bare proxy in a
 * process of its own (node:http in, undici out, the body piped back, nothing checked) against
 * the direct call, at 32 callers. With an instant upstream it does twice the HTTP work of the
 * direct call on the same two cores, which bounds what the app can reach.
 */
async function bareProxyCeiling(emulatorUrl: string, app: Record<string, unknown>): Promise<Record<string, unknown>> {
  const proxyScript = `const { Agent, request } = require('undici'); const agent = new Agent();
    require('node:http').createServer(async (incoming, outgoing) => {
      const answer = await request(${JSON.stringify(emulatorUrl)} + incoming.url.replace(/^\\/api/, ''), { dispatcher: agent, headers: { authorization: 'Bearer ${token}' } });
      outgoing.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
      for await (const chunk of answer.body) outgoing.write(chunk);
      outgoing.end();
    }).listen(0, '127.0.0.1', function () { console.log('Proxy listening on http://127.0.0.1:' + this.address().port); });`;
  const { url, child } = await spawnListening('Proxy', ['-e', proxyScript], { cwd: root });
  try {
    const measured = await autocannon({ url: `${url}/api/${usagesPath}`, connections: 32, duration: 3 });
    const proxy = { requestsPerSecond: measured.requests.average, p99Ms: measured.latency.p99, errors: measured.errors + measured.non2xx };
    const direct = app.direct as { requestsPerSecond: number };
    const viaApp = app.app as { requestsPerSecond: number };
    rows.push({
      section: 'throughput',
      metric: 'usages, 32 callers, upstream +0 ms: a bare proxy (node:http + undici, nothing checked)',
      baseline: `${Math.round(direct.requestsPerSecond)} req/s direct`,
      app: `${Math.round(proxy.requestsPerSecond)} req/s proxy (${proxy.errors} errors)`,
      difference: `x${round(proxy.requestsPerSecond / direct.requestsPerSecond)} (app x${round(viaApp.requestsPerSecond / proxy.requestsPerSecond)} of it)`,
    });
    return { upstreamLatencyMs: 0, connections: 32, bareProxy: proxy, direct, appOverProxy: round(viaApp.requestsPerSecond / proxy.requestsPerSecond) };
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * Spawns `node ...args` in an empty folder, waits for it to print `<announcement> <url>`, and
 * times from the spawn to the end of the first answer to `path`; the process is then stopped.
 */
async function timeToFirstAnswer(args: string[], env: Record<string, string>, announcement: string, path: string): Promise<number> {
  const cwd = mkdtempSync(resolve(tmpdir(), 'bench-start-'));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const errors = keptErrorOutput(child);
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = new RegExp(`${announcement} (\\S+)`).exec(output);
        if (match) resolveUrl(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}${errors()}`)));
    });
    const response = await request(`${url}${path}`, { headers: { 'content-type': 'application/json' } });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
}

/**
 * Process start to the first served response: `node dist/tools/start.js` (the local host, the
 * bundle, the first call through it) against a bare node HTTP server started the same way. The
 * upstream is an emulator already running, storage a closed port a GET never touches, and
 * timers are off, so only the app's own start is in the figure.
 */
async function firstResponse(): Promise<void> {
  const emulator = await spawnEmulator({});
  const bareServer = `require('node:http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log('Listening on http://127.0.0.1:'+this.address().port)})`;
  const appSettings = {
    ...appEnv(emulator.url, { connectionString: azuriteConnectionString('http://127.0.0.1:9/devstoreaccount1') }),
    PORT: '0',
    LOCAL_HOST_TIMERS: 'off',
  };
  const bare: number[] = [];
  const app: number[] = [];
  try {
    // Nine: a process start on this shared two-core machine varies by a third from one to the next.
    for (let sample = 0; sample < 9; sample += 1) {
      bare.push(await timeToFirstAnswer(['-e', bareServer], {}, 'Listening on', '/'));
      app.push(await timeToFirstAnswer([resolve(root, 'dist', 'tools', 'start.js')], appSettings, 'Functions host listening on', `/api/${usagesPath}`));
    }
  } finally {
    emulator.child.kill('SIGTERM');
  }
  const figures = { bareNodeMs: round(median(bare)), appMs: round(median(app)) };
  results.firstResponse = figures;
  rows.push({
    section: 'start-up',
    metric: 'process start to first served response (GET list, median of 9)',
    baseline: `${figures.bareNodeMs} ms bare node HTTP server`,
    app: `${figures.appMs} ms local host`,
    difference: `+${round(figures.appMs - figures.bareNodeMs)} ms`,
  });
}

function startup(): void {
  const bundle = resolve(root, 'dist', 'functions', 'index.js');
  const loadOnce = (script: string) => {
    const output = spawnSync(process.execPath, ['-e', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' },
    }).stdout.toString();
    // The measurement is the last line: the app may log its start-up lines (ACCESS_POLICY) first.
    return JSON.parse(output.trimEnd().split('\n').at(-1) ?? '') as { ms: number; rssMiB: number };
  };
  const measureLoad = (script: string) => {
    const samples = Array.from({ length: 5 }, () => loadOnce(script));
    return { ms: round(median(samples.map((sample) => sample.ms))), rssMiB: round(median(samples.map((sample) => sample.rssMiB)), 1) };
  };
  const timed = (body: string) =>
    `const t=process.hrtime.bigint();${body};console.log(JSON.stringify({ms:Number(process.hrtime.bigint()-t)/1e6,rssMiB:process.memoryUsage().rss/2**20}))`;
  // The bundle needs the worker's functions-core; a stand-in that accepts registrations.
  const core = `const M=require('module');const r=M._resolveFilename;M._resolveFilename=function(q,...a){return q==='@azure/functions-core'?'core':r.call(this,q,...a)};M._cache.core={exports:{setProgrammingModel(){},registerFunction(){},registerHook(){}},loaded:true};`;
  const app = measureLoad(`${core}${timed(`require(${JSON.stringify(bundle)})`)}`);
  const appWithoutCodeCache = measureLoad(`${core}${timed(`require(${JSON.stringify(resolve(root, 'dist', 'functions', 'app.js'))})`)}`);
  const sdk = measureLoad(
    timed(
      ['@azure/identity', '@azure/storage-blob', '@azure/arm-containerinstance', '@azure/arm-apimanagement', '@azure/arm-eventhub', '@azure/arm-authorization', '@azure/arm-resourcehealth']
        .map((name) => `require('${name}')`)
        .join(';'),
    ),
  );
  // index.js only loads app.js, the bundle, with its code cache (src/codeCache.ts).
  const appBundle = resolve(root, 'dist', 'functions', 'app.js');
  const bytes = statSync(appBundle).size;
  const gzipped = gzipSync(readFileSync(appBundle)).length;
  const withNodeCompileCache = nodeCompileCacheLoad(`${core}${timed(`require(${JSON.stringify(bundle)})`)}`, (cacheFolder) => `${core}${timed(`require('node:module').enableCompileCache(${JSON.stringify(cacheFolder)});require(${JSON.stringify(appBundle)})`)}`, loadOnce);
  results.startup = { app, appWithoutCodeCache, withNodeCompileCache, azureSdkPackages: sdk, bundleBytes: bytes, bundleGzipBytes: gzipped };
  rows.push(
    { section: 'start-up', metric: 'load time (median of 5)', baseline: `${sdk.ms} ms Azure SDK packages`, app: `${app.ms} ms bundle`, difference: `x${round(app.ms / sdk.ms)}` },
    { section: 'start-up', metric: 'load time without the code cache (median of 5)', baseline: `${sdk.ms} ms Azure SDK packages`, app: `${appWithoutCodeCache.ms} ms bundle`, difference: `x${round(appWithoutCodeCache.ms / sdk.ms)}` },
    ...(withNodeCompileCache
      ? [{ section: 'start-up', metric: "load time with Node's compile cache instead (medians of 9 alternate loads)", baseline: `${withNodeCompileCache.ownCacheMs} ms app's own cache`, app: `${withNodeCompileCache.ms} ms module.enableCompileCache`, difference: `x${withNodeCompileCache.ratio}` }]
      : []),
    { section: 'start-up', metric: 'resident memory after load', baseline: `${sdk.rssMiB} MiB`, app: `${app.rssMiB} MiB`, difference: `${round(app.rssMiB - sdk.rssMiB, 1)} MiB` },
    { section: 'start-up', metric: 'bundle size', baseline: '-', app: `${(bytes / 2 ** 20).toFixed(2)} MiB (${(gzipped / 2 ** 20).toFixed(2)} MiB gzip)`, difference: '-' },
  );
}

/**
 * On Node 22+, the bundle loaded with Node's own compile cache (module.enableCompileCache) in
 * place of the app's (src/codeCache.ts), primed by a first load (it is written when a process
 * exits). The two loads alternate, so a busy machine slows both alike; the ratio is the median
 * of each pair's. Undefined on a Node without it.
 */
function nodeCompileCacheLoad(ownCacheScript: string, compileCacheScript: (cacheFolder: string) => string, loadOnce: (script: string) => { ms: number }) {
  if (typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache !== 'function') return undefined;
  const cacheFolder = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
  try {
    loadOnce(compileCacheScript(cacheFolder));
    const pairs = Array.from({ length: 9 }, () => ({ own: loadOnce(ownCacheScript).ms, node: loadOnce(compileCacheScript(cacheFolder)).ms }));
    return {
      ownCacheMs: round(median(pairs.map((pair) => pair.own))),
      ms: round(median(pairs.map((pair) => pair.node))),
      ratio: round(median(pairs.map((pair) => pair.node / pair.own))),
    };
  } finally {
    rmSync(cacheFolder, { recursive: true, force: true });
  }
}

async function longRunning(azurite: RunningAzurite): Promise<void> {
  const durationMs = 5000;
  const retryAfterSeconds = 1;
  const emulator = await startEmulator({ token, lroDurationMs: durationMs, retryAfterSeconds });
  const app = await startApp(appEnv(emulator.url, azurite, { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', ORCHESTRATION_CONTAINER: 'bench-lro' }));
  const count = 10;
  const started = await Promise.all(
    Array.from({ length: count }, async (_unused, index) => {
      const response = await request(`${app.url}/api/${groupPath(`lro-${index}`)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: groupBody });
      await response.body.dump();
      return { id: response.headers['x-orchestration-id'] as string, startedAt: Date.now() };
    }),
  );
  const delays: number[] = [];
  for (const orchestration of started) {
    for (;;) {
      const status = (await (await request(`${app.url}/api/orchestrations/${orchestration.id}`)).body.json()) as { runtimeStatus: string; lastUpdatedTime: string };
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
  results.longRunning = { orchestrations: count, operationDurationMs: durationMs, retryAfterSeconds, statusReadsAllowedAtMost: allowedReads, statusReadsPerOrchestration: statusReads, finalResourceReadsPerOrchestration: finalReads, completionDelayMedianMs: median(delays), completionDelayMaxMs: Math.max(...delays) };
  rows.push(
    { section: 'long-running', metric: `status reads per orchestration (${count}, 5 s operation, Retry-After 1 s)`, baseline: `${allowedReads} at most`, app: `${statusReads} (+${finalReads} final GET)`, difference: `x${round(statusReads / allowedReads)}` },
    { section: 'long-running', metric: 'upstream done → app reports Completed', baseline: '0 ms ideal', app: `${median(delays)} ms median, ${Math.max(...delays)} ms max`, difference: `+${median(delays)} ms` },
  );
  await app.stop();
  await emulator.close();
}

/**
 * One poller run with 0, 1,000 and 10,000 finished orchestrations stored beside 10 running
 * (none due): the index makes a run cost what is due, so the stored ones should not show.
 */
async function pollerRun(azurite: RunningAzurite): Promise<void> {
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
      await engine.start({ name: 'ContainerGroups_CreateOrUpdate', method: 'PUT', path, query: [['api-version', '2025-09-01']], bodyText: groupBody, resourceUrl: url }, () =>
        new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).send({ method: 'PUT', url, token, body: groupBody, headers: { 'content-type': 'application/json' } }),
      );
    }
    // Finished ones as the engine leaves them: the document, and its purge marked a week out.
    const index = new OrchestrationIndex(container, new StorageBudget(30_000, 'bench'));
    const time = new Date().toISOString();
    for (let batch = 0; batch < finished; batch += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, finished - batch) }, async () => {
          const id = randomUUID();
          const state: OrchestrationState = { id, name: 'ContainerGroups_CreateOrUpdate', runtimeStatus: 'Completed', input: { method: 'PUT', path: 'p', query: [] }, requestKey: id, createdTime: time, lastUpdatedTime: time, endedTime: time };
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

/**
 * 1,000 container group starts due at once, worked off by one instance's poller (bench/burst.ts),
 * each emulator in a process of its own: one finishing on the first status read, one answering
 * "running" once first (for what a poll that goes on costs).
 */
async function pollerBurst(): Promise<void> {
  const finishing = await spawnEmulator({ EMULATOR_LRO_STEPS: '1' });
  const goingOn = await spawnEmulator({ EMULATOR_LRO_STEPS: '2' });
  // An Azurite of its own for each burst: Azurite's in-memory table scans every blob it holds on
  // each request (LokiJS's find and $eq took half of its CPU in a profile of the burst), so the
  // 11,000 blobs of the sections before would slow it; an Azure Storage account's other blobs
  // do not slow a request by name.
  const azurite = await spawnAzurite();
  const appAzurite = await spawnAzurite();
  try {
    const figures = await burst({ connectionString: azurite.connectionString, storagePid: azurite.pid, finishingUrl: finishing.url, goingOnUrl: goingOn.url, token, count: 1000, maxWorkOffMs: 120_000 });
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
        metric: 'storage requests per poll: goes on / ends (with the runs\' listings)',
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
    appEnv(emulatorUrl, { connectionString: azuriteConnectionString(`${proxy.origin}${storage.pathname}`) }, { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', ORCHESTRATION_CONTAINER: `bench-burst-app-${randomUUID().slice(0, 6)}` }),
  );
  try {
    const startedAt = Date.now();
    let next = 0;
    const starter = async () => {
      for (let index = next++; index < count; index = next++) {
        const response = await request(`${app.url}/api/${groupPath(`burst-app-${index}`)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: groupBody });
        await response.body.dump();
      }
    };
    await Promise.all(Array.from({ length: 32 }, starter));
    const startsMs = Date.now() - startedAt;
    // Each orchestration ends on its first poll: the poller's own log lines count them, so
    // watching costs storage nothing.
    const sweeps = () => app.lines.filter((line) => line.includes('"event":"sweep"')).map((line) => JSON.parse(line.slice(line.indexOf('{'))) as { polled: number; deferred?: number; overran?: boolean });
    const polled = () => sweeps().reduce((sum, sweep) => sum + sweep.polled, 0);
    const deadline = Date.now() + 180_000;
    while (polled() < count && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    const ms = Date.now() - startedAt;
    const runs = sweeps();
    const running = count - polled();
    const figures = { orchestrations: count, startsMs, workedOffMs: ms, left: running, orchestrationsPerSecond: round((count - running) / (ms / 1000), 1), runs: runs.length, runsThatOverran: runs.filter((run) => run.overran).length, storageRequests: proxy.requests.length };
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

async function certificates(azurite: RunningAzurite): Promise<void> {
  const emulator = await startEmulator({ token });
  const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
  const container = blobs.getContainerClient(`bench-${randomUUID().slice(0, 8)}`);
  const store = new CertificateStore(container, blobs.getContainerClient(`bench-secrets-${randomUUID().slice(0, 8)}`), 3);
  const refresher = new CertificateRefresher({
    store,
    limiter: new DistributedRateLimiter(container, 60_000),
    upstream: new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    versionHeader: ['x-vendor-version', '2017-09-15'],
    policy: { renewBeforeMs: 14 * 24 * 3600_000, alertBeforeMs: 7 * 24 * 3600_000 },
    maxBundleBytes: 1024 * 1024,
    concurrency: 4,
    now: Date.now,
    log: () => undefined,
    warn: () => undefined,
  });
  const environments = Array.from({ length: 100 }, (_unused, index) => ({ projectId: 1000 + index, environmentId: randomUUID() }));
  const run = async (force: boolean) => {
    const before = emulator.upstreamRequests().length;
    const started = Date.now();
    const outcomes = await refresher.refreshAll(environments, { force, trigger: 'bench', token });
    const calls = emulator.upstreamRequests().length - before;
    return { calls, ms: Date.now() - started, downloaded: outcomes.filter((outcome) => outcome.outcome === 'downloaded').length, rateLimited: outcomes.filter((outcome) => outcome.outcome === 'rate-limited').length };
  };
  const first = await run(false);
  const second = await run(false);
  const forced = await run(true);
  // 429s the service would have answered: calls it saw within a minute of the previous one.
  const throttled = emulator.requests.length - new Set(emulator.requests.map((seen) => seen.path)).size;
  results.certificates = { environments: 100, first, secondWithinTheMinute: second, forcedWithinTheMinute: forced, upstream429s: throttled };
  rows.push(
    { section: 'certificates', metric: '100 environments, first refresh', baseline: '100 calls needed', app: `${first.calls} calls, ${first.downloaded} stored, ${first.ms} ms`, difference: `${first.calls - 100} calls` },
    { section: 'certificates', metric: 'again within the minute (fresh / forced)', baseline: '0 calls allowed', app: `${second.calls} / ${forced.calls} calls (${forced.rateLimited} held back)`, difference: `${throttled} upstream 429s provoked` },
  );
  await emulator.close();
}

/**
 * 10,000 items over 100 pages: merged by the app (`gateway-pages=all`, through the local host)
 * against following nextLink directly. Three of each first, so the app's fresh process runs warm
 * code as the bench's own client already does, then the median of seven alternating runs: one
 * cold run each moved the ratio between 1.0 and 1.6 on this machine.
 */
async function paging(azurite: RunningAzurite): Promise<void> {
  const emulator = await spawnEmulator({ EMULATOR_LIST_ITEMS: '10000', EMULATOR_PAGE_SIZE: '100' });
  const app = await startApp(appEnv(emulator.url, azurite));
  const followDirectly = async () => {
    let url: string | undefined = `${emulator.url}/${usagesPath}`;
    let items = 0;
    while (url) {
      const page = (await (await request(url, { headers: { authorization: `Bearer ${token}` } })).body.json()) as { value: unknown[]; nextLink?: string };
      items += page.value.length;
      url = page.nextLink;
    }
    return items;
  };
  const merge = async () => ((await (await request(`${app.url}/api/${usagesPath}&gateway-pages=all`)).body.json()) as { value: unknown[] }).value.length;
  const pid = app.child.pid!;
  const peakBefore = residentBytes(pid, true);
  const timed = async (run: () => Promise<number>) => {
    const started = process.hrtime.bigint();
    const items = await run();
    return { ms: Number(process.hrtime.bigint() - started) / 1e6, items };
  };
  for (let warmUp = 0; warmUp < 3; warmUp += 1) {
    await followDirectly();
    await merge();
  }
  const runs = 7;
  const direct: number[] = [];
  const merged: number[] = [];
  let directItems = 0;
  let mergedItems = 0;
  for (let run = 0; run < runs; run += 1) {
    const directRun = await timed(followDirectly);
    const mergedRun = await timed(merge);
    direct.push(directRun.ms);
    merged.push(mergedRun.ms);
    directItems = directRun.items;
    mergedItems = mergedRun.items;
  }
  const peakAfter = residentBytes(pid, true);
  const directMs = round(median(direct), 1);
  const appMs = round(median(merged), 1);
  results.paging = { items: mergedItems, pages: 100, directItems, runs, directMs, appMs, directRunsMs: direct.map((ms) => round(ms, 1)), appRunsMs: merged.map((ms) => round(ms, 1)), appPeakResidentBeforeMiB: round(peakBefore / 2 ** 20, 1), appPeakResidentAfterMiB: round(peakAfter / 2 ** 20, 1) };
  rows.push(
    { section: 'paging', metric: `10,000 items over 100 pages, merged (median of ${runs})`, baseline: `${directMs} ms following nextLink directly`, app: `${appMs} ms, ${mergedItems} items`, difference: `x${round(appMs / directMs)}` },
    { section: 'paging', metric: 'app peak resident memory (VmHWM)', baseline: `${round(peakBefore / 2 ** 20, 1)} MiB before`, app: `${round(peakAfter / 2 ** 20, 1)} MiB after`, difference: `+${round((peakAfter - peakBefore) / 2 ** 20, 1)} MiB` },
  );
  await app.stop();
  emulator.child.kill('SIGTERM');
}

function printTable(): void {
  const widths = (['section', 'metric', 'baseline', 'app', 'difference'] as const).map((key) => Math.max(key.length, ...rows.map((row) => row[key].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, index) => cell.padEnd(widths[index]!)).join(' | ')} |`;
  console.log(line(['section', 'metric', 'baseline', 'app', 'difference']));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line([row.section, row.metric, row.baseline, row.app, row.difference]));
}

async function main(): Promise<void> {
  const machine = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version, platform: process.platform };
  console.log(`Benchmarks on ${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  const azurite = await spawnAzurite();
  const sections: Record<string, () => Promise<void> | void> = {
    addedLatency: async () => {
      const emulator = await spawnEmulator({ EMULATOR_LRO_STEPS: '1000000' });
      const app = await startApp(appEnv(emulator.url, azurite));
      try {
        await addedLatency(emulator.url, app, azurite);
      } finally {
        await app.stop();
        emulator.child.kill('SIGTERM');
      }
    },
    throughput: () => throughput(azurite),
    startup: async () => {
      startup();
      await firstResponse();
    },
    longRunning: () => longRunning(azurite),
    pollerRun: () => pollerRun(azurite),
    pollerBurst: () => pollerBurst(),
    certificates: () => certificates(azurite),
    paging: () => paging(azurite),
    // Last: it leaves the telemetry SDK set up in this process.
    telemetry: () => telemetryCost(azurite),
  };
  // `npm run bench -- pollerRun paging` runs those sections only (and writes no results file).
  const chosen = process.argv.slice(2);
  const unknown = chosen.filter((name) => !(name in sections));
  if (unknown.length > 0) throw new Error(`Unknown bench sections: ${unknown.join(', ')}; known: ${Object.keys(sections).join(', ')}`);
  try {
    for (const [name, run] of Object.entries(sections)) if (chosen.length === 0 || chosen.includes(name)) await run();
  } finally {
    await azurite.close();
  }
  printTable();
  if (chosen.length === 0) {
    writeFileSync(resolve(root, 'bench', 'results.json'), `${JSON.stringify({ machine, measuredAt: new Date().toISOString(), ...results }, null, 2)}\n`);
    console.log('\nWritten: bench/results.json');
  }
}

/**
 * Azurite in a process of its own, as storage is a service of its own in production: its work
 * then neither counts as the app's CPU nor queues behind the app's event loop (the bench runs
 * the handler, the engine and the refresher in its own process). This file run with
 * `--serve-azurite` is that process.
 */
async function spawnAzurite(): Promise<RunningAzurite & { pid?: number }> {
  // Its stdin is a pipe from this process: when this one ends, however it ends, Azurite does too.
  const { url: blobEndpoint, child } = await spawnListening('Azurite', [__filename, '--serve-azurite'], { stdin: 'pipe' });
  return {
    pid: child.pid,
    blobEndpoint,
    connectionString: azuriteConnectionString(blobEndpoint),
    close: async () => {
      child.kill('SIGTERM');
    },
  };
}

async function serveAzurite(): Promise<void> {
  const azurite = await startAzurite();
  console.log(`Azurite listening on ${azurite.blobEndpoint}`);
  await new Promise<void>((resolveStop) => {
    process.once('SIGTERM', () => resolveStop());
    process.stdin.on('end', () => resolveStop()).resume();
  });
  await azurite.close();
}

(process.argv[2] === '--serve-azurite' ? serveAzurite() : main()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
