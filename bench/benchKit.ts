/**
 * What every section of the bench (bench/bench.ts) shares: the calls it makes, the table it fills
 * and the figures it writes, the statistics, and the processes it starts (emulators, Azurite,
 * small servers of its own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { azuriteConnectionString, startAzurite, type RunningAzurite } from '../tools/embeddedAzurite';

export const root = resolve(__dirname, '..', '..');
export const token = 'emulator-token';
export const subscription = '00000000-0000-0000-0000-000000000000';
export const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
export const groupPath = (name: string) =>
  `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`;
export const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });

interface Row {
  section: string;
  metric: string;
  baseline: string;
  app: string;
  difference: string;
}
export const rows: Row[] = [];
export const results: Record<string, unknown> = {};

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
export const median = (values: number[]) => percentile(values, 50);

export async function timeEach(count: number, call: (index: number) => Promise<void>): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = process.hrtime.bigint();
    await call(index);
    durations.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return durations;
}

/** What a child writes to stderr, its last 16 KiB, to show when it fails. */
export function keptErrorOutput(child: ChildProcess): () => string {
  let kept = '';
  child.stderr!.on('data', (chunk: Buffer) => (kept = (kept + chunk.toString('utf8')).slice(-16_384)));
  return () => kept;
}

/**
 * `node ...args` in a process of its own, once it prints `<name> listening on <url>`; `stdin`
 * 'pipe' ties its life to this process's (the child ends when the pipe does).
 */
export async function spawnListening(
  name: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: 'ignore' | 'pipe' } = {},
): Promise<{ url: string; child: ChildProcess }> {
  // The child's warnings are kept and shown only if it fails: a bench starts many processes.
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
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
export function spawnEmulator(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  return spawnListening('Emulator', [resolve(root, 'dist', 'bench', 'emulator.js')], { env });
}

export function appEnv(emulatorUrl: string, azurite: Pick<RunningAzurite, 'connectionString'>, extra: Record<string, string> = {}): Record<string, string> {
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
 * Azurite in a process of its own, as storage is a service of its own in production: its work
 * then neither counts as the app's CPU nor queues behind the app's event loop (the bench runs
 * the handler, the engine and the refresher in its own process). The bench's bundle
 * (dist/bench/bench.js, `__filename` in each of its modules) run with `--serve-azurite` is that
 * process (bench/bench.ts).
 */
export async function spawnAzurite(): Promise<RunningAzurite & { pid?: number }> {
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

export async function serveAzurite(): Promise<void> {
  const azurite = await startAzurite();
  console.log(`Azurite listening on ${azurite.blobEndpoint}`);
  await new Promise<void>((resolveStop) => {
    process.once('SIGTERM', () => resolveStop());
    process.stdin.on('end', () => resolveStop()).resume();
  });
  await azurite.close();
}

export function printTable(): void {
  const widths = (['section', 'metric', 'baseline', 'app', 'difference'] as const).map((key) => Math.max(key.length, ...rows.map((row) => row[key].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, index) => cell.padEnd(widths[index]!)).join(' | ')} |`;
  console.log(line(['section', 'metric', 'baseline', 'app', 'difference']));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line([row.section, row.metric, row.baseline, row.app, row.difference]));
}
