/**
 * Runs the emulator as a process of its own (for the benchmarks, so it does not share an
 * event loop with the load generator). Options come from EMULATOR_* variables; it prints
 * `Emulator listening on <url>` and stops on SIGTERM.
 */
import { startEmulator } from './emulatorServer';

const numberFrom = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);

startEmulator({
  token: process.env.EMULATOR_TOKEN ?? 'emulator-token',
  latencyMs: numberFrom('EMULATOR_LATENCY_MS'),
  listItems: numberFrom('EMULATOR_LIST_ITEMS'),
  pageSize: numberFrom('EMULATOR_PAGE_SIZE'),
  lroSteps: numberFrom('EMULATOR_LRO_STEPS'),
})
  .then((emulator) => {
    console.log(`Emulator listening on ${emulator.url}`);
    process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
