/**
 * `npm run bench`: every figure is a ratio or difference against a baseline measured in the
 * same run (DEVELOPERS.md, Standards). Starts what it needs (emulator processes, Azurite, the
 * built app through the local host), prints a table, writes bench/results.json, stops all.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { addedLatency } from './addedLatency';
import { printTable, results, root, round, serveAzurite, spawnAzurite } from './benchKit';
import { callerShares } from './callerShares';
import { certificates } from './certificates';
import { longRunning, pollerRun } from './longRunning';
import { paging } from './paging';
import { pollerBurst } from './pollerBurst';
import { firstResponse, startup } from './startup';
import { telemetryCost } from './telemetryCost';
import { throughput } from './throughput';

async function main(): Promise<void> {
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: process.platform,
  };
  console.log(`Benchmarks on ${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  const azurite = await spawnAzurite();
  const sections: Record<string, () => Promise<void> | void> = {
    addedLatency: () => addedLatency(azurite),
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
    callerShares: () => callerShares(azurite),
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

(process.argv[2] === '--serve-azurite' ? serveAzurite() : main()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
