/**
 * Runs the emulator as a process of its own (for the benchmarks, so it does not share an
 * event loop with the load generator). Options come from EMULATOR_* variables; it prints
 * `Emulator listening on <url>` and stops on SIGTERM.
 */
import { startEmulator } from './emulatorServer';

const numberOf = (value: string | undefined) => (value ? Number(value) : undefined);

startEmulator({
  token: process.env.EMULATOR_TOKEN ?? 'emulator-token',
  latencyMs: numberOf(process.env.EMULATOR_LATENCY_MS),
  listItems: numberOf(process.env.EMULATOR_LIST_ITEMS),
  pageSize: numberOf(process.env.EMULATOR_PAGE_SIZE),
  lroSteps: numberOf(process.env.EMULATOR_LRO_STEPS),
})
  .then((emulator) => {
    console.log(`Emulator listening on ${emulator.url}`);
    process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
