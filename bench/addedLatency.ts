/**
 * The added-latency section: what a call through the app costs over the same call made directly,
 * over HTTP through the local host and with the handler invoked in this process, and the
 * handler's CPU per call.
 */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { Agent, request } from 'undici';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { installFunctionsCore } from '../tools/localHost/installCore';
import { startApp, type AppProcess } from '../tools/harness/appProcess';
import { appEnv, groupBody, groupPath, median, percentile, results, round, rows, spawnEmulator, subscription, timeEach, token, usagesPath } from './benchKit';
import { callsARound, cpuPerCallOfRound } from './cpuPerCall';

export async function addedLatency(azurite: RunningAzurite): Promise<void> {
  const emulator = await spawnEmulator({ EMULATOR_LRO_STEPS: '1000000' });
  const app = await startApp(appEnv(emulator.url, azurite));
  try {
    await measureAddedLatency(emulator.url, app, azurite);
  } finally {
    await app.stop();
    emulator.child.kill('SIGTERM');
  }
}

/**
 * CPU the handler spends per call: process.cpuUsage over `calls` in-process handler calls less
 * the same number of direct undici calls (the emulator runs in its own process, so only this
 * process's side of each call counts). Requests are built before the clock starts: building
 * them is the worker's work, not the app's. The median of a few rounds, as the machine is shared.
 */
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

async function measureAddedLatency(emulatorUrl: string, app: AppProcess, azurite: RunningAzurite): Promise<void> {
  const iterations = 300;
  const dispatcher = new Agent({ connections: 1 });
  const direct =
    (path: string, init: { method?: string; body?: string } = {}) =>
    async () => {
      const response = await request(`${emulatorUrl}/${path}`, {
        dispatcher,
        method: (init.method ?? 'GET') as 'GET',
        body: init.body,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
      await response.body.dump();
    };
  const viaApp =
    (path: string, init: { method?: string; body?: string } = {}) =>
    async () => {
      const response = await request(`${app.url}/api/${path}`, {
        dispatcher,
        method: (init.method ?? 'GET') as 'GET',
        body: init.body,
        headers: { 'content-type': 'application/json' },
      });
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
  const inProcess =
    (name: string, path: string, params: Record<string, string>, init: { method?: string; body?: string } = {}) =>
    async () => {
      const url = new URL(`http://127.0.0.1/api/${path}`);
      await operationHandlers[name]!(
        new HttpRequest({
          method: init.method ?? 'GET',
          url: url.toString(),
          params,
          headers: { 'content-type': 'application/json' },
          body: init.body ? { string: init.body } : undefined,
        }),
        context(),
      );
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
      inProcess: (index: number) =>
        inProcess(
          'containerGroups-createOrUpdate',
          groupPath(`inproc-${index}`),
          { subscriptionId: subscription, resourceGroupName: 'rg', containerGroupName: `inproc-${index}` },
          { method: 'PUT', body: groupBody },
        )(),
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
      {
        section: 'added latency',
        metric: `${entry.name}, in-process, median / p99`,
        baseline: `${figures.directMedianMs} / ${figures.directP99Ms} ms direct`,
        app: `${round(median(inProcessMs))} / ${round(percentile(inProcessMs, 99))} ms`,
        difference: `+${figures.inProcessAddedMedianMs} / +${figures.inProcessAddedP99Ms} ms`,
      },
      {
        section: 'added latency',
        metric: `${entry.name}, over HTTP, median / p99`,
        baseline: `${figures.directMedianMs} / ${figures.directP99Ms} ms direct`,
        app: `${round(median(httpMs))} / ${round(percentile(httpMs, 99))} ms`,
        difference: `+${figures.httpAddedMedianMs} / +${figures.httpAddedP99Ms} ms`,
      },
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
    () =>
      new HttpRequest({
        method: 'GET',
        url: `http://127.0.0.1/api/${usagesPath}`,
        params: { subscriptionId: subscription, location: 'westus' },
        headers: { 'content-type': 'application/json' },
      }),
    (request) => operationHandlers['location-listUsage']!(request, context()).then(() => undefined),
  );
  rows.push({
    section: 'added latency',
    metric: `handler CPU per GET list, in-process (${handlerCpu.calls} calls, median of ${handlerCpu.rounds})`,
    baseline: `${handlerCpu.directMicros} µs a direct undici call`,
    app: `${handlerCpu.inProcessMicros} µs`,
    difference: `+${handlerCpu.handlerMicros} µs`,
  });
  results.addedLatency = {
    iterations,
    ...latency,
    trackedOverUntrackedMs: round(tracked.inProcessAddedMedianMs - untracked.inProcessAddedMedianMs),
    storageRoundMs: round(storageRoundMs),
    handlerCpu,
  };
  console.log = print;
  await dispatcher.close();
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
