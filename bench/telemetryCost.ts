/** The telemetry section: what exporting traces and metrics costs a call's handler. */
import { Agent, request } from 'undici';
import { resetConfigForTests } from '../src/settings';
import { flushSpans, pauseTelemetry, startTelemetry, stopTelemetry } from '../src/telemetry';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { installFunctionsCore } from '../tools/localHost/installCore';
import { appEnv, median, results, round, rows, spawnEmulator, spawnListening, subscription, token, usagesPath } from './benchKit';
import { callsARound, cpuPerCallInBatches, cpuPerCallOfRound } from './cpuPerCall';

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
export async function telemetryCost(azurite: RunningAzurite): Promise<void> {
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
    Object.assign(process.env, appEnv(emulator.url, azurite), {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_BSP_MAX_QUEUE_SIZE: held,
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: held,
      OTEL_BSP_SCHEDULE_DELAY: '3600000',
    });
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
    const build = () =>
      new HttpRequest({
        method: 'GET',
        url: `http://127.0.0.1/api/${usagesPath}`,
        params: { subscriptionId: subscription, location: 'westus' },
        headers: { 'content-type': 'application/json' },
      });
    const handle = (call: InstanceType<typeof HttpRequest>) =>
      operationHandlers['location-listUsage']!(call, new InvocationContext({ functionName: 'bench', logHandler: () => undefined })).then(() => undefined);
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
        metric: "the same plus the batch export (encoding, sending), off the calls' path, per call",
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
    results.telemetry = {
      calls: callsARound,
      pairs,
      handlerOffMicros: wholeOffMicros,
      handlerOnMicros: wholeOnMicros,
      handlerCpuGrowthPercent: growth,
      exportMicrosPerCall: exportPerCall,
      withExportGrowthPercent: withExport,
      addedOffMicros: offMicros,
      addedOnMicros: onMicros,
      addedGrowthPercent: addedGrowth,
      directOffMicros: directOff,
      directOnMicros: directOn,
    };
  } finally {
    console.log = print;
    collector.child.kill('SIGTERM');
    emulator.child.kill('SIGTERM');
  }
}
