/**
 * Every command block of the README and docs/ that targets the local app runs here as it is
 * written, read from the documents themselves, in reading order: each `<!-- local start -->`
 * block's `npm start` line starts the app (the built local host, as `npm start` runs it after its
 * build) with that line's settings and options, and the shell blocks after it run in bash against
 * it, in one folder standing for the reader's checkout, with the files the documents give
 * (`<!-- file: NAME -->`) written there. Only the port changes: 7071 becomes the port the app got,
 * and any other local port a free one. A block marked `<!-- not run by the tests: WHY -->` is
 * skipped, and only those: the last test checks that every other block ran. A block running a tool
 * the repository does not bring (`az`, the Azure SDK for Python) fails, saying how to install it,
 * where the tool is missing.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { documentedSteps, type DocumentedStep } from '../helpers/documentedCommands';
import { missingToolsOf } from '../helpers/documentedTools';
import { repositoryRoot } from '../helpers/markdownDocs';

const steps = documentedSteps();
const runnable = steps.filter((step) => step.kind === 'start' || step.kind === 'run');
/** What ran, by where its block is. */
const ran = new Set<string>();
/** The app of the last start, by scheme: a block's http:// and https:// addresses go to it. */
const apps = new Map<'http' | 'https', AppProcess>();
const stoppedApps: AppProcess[] = [];
/** Each local port the documents name but 7071 → a free one, the same wherever it appears. */
const ports = new Map<string, string>();
let folder: string;
/** The PATH a reader's terminal has: this one. */
const readerPath = process.env.PATH ?? '';

/**
 * A port free now, below Linux's ephemeral range (32768 and up): it stands for a documented port
 * until a block listens on it, maybe a minute later, and the system hands ephemeral ports to every
 * other test's servers and connections meanwhile, one of which took a port picked from that range.
 */
async function freePort(): Promise<string> {
  for (let tries = 0; tries < 200; tries += 1) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((done) => {
      server.once('error', () => done(false));
      server.listen(candidate, '127.0.0.1', () => done(true));
    });
    if (bound) {
      await new Promise((closed) => server.close(closed));
      return String(candidate);
    }
  }
  throw new Error('No free port from 20000 to 31999 in 200 tries');
}

/**
 * The text with a free port for each local port but 7071 (in its URLs, and in a setting such as
 * EMULATOR_PORT=7072 that makes something listen there), and the app's address for
 * 127.0.0.1:7071 unless `appPort` is false.
 */
function withLocalPorts(text: string, appPort = true): string {
  const settingPorts = text.replace(/\b([A-Z][A-Z_]*_PORT)=(\d+)\b/g, (whole, name: string, port: string) =>
    ports.has(port) ? `${name}=${ports.get(port)}` : whole,
  );
  return settingPorts.replace(/\b(https?):\/\/127\.0\.0\.1:(\d+)/g, (whole, scheme: 'http' | 'https', port: string) => {
    if (port !== '7071') return `${scheme}://127.0.0.1:${ports.get(port)}`;
    if (!appPort) return whole;
    const app = apps.get(scheme);
    if (!app) throw new Error(`${whole} is used before a local start serves ${scheme}`);
    return app.url;
  });
}

/** Runs bash in the folder; resolves with its exit code and everything it printed. */
function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', script], { cwd: folder, env: { PATH: readerPath, HOME: folder, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  return new Promise((resolveRun) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, output });
    }),
  );
}

/**
 * The settings and options of a start line, read by bash itself: its `npm start` becomes a
 * Node one-liner printing what it was given.
 */
async function startSettingsOf(command: string): Promise<{ env: Record<string, string>; args: string[] }> {
  const probe = `node -e 'console.log(JSON.stringify({ env: process.env, args: process.argv.slice(1) }))'`;
  const { code, output } = await bash(withLocalPorts(command).replace(/\bnpm start\b/, probe), {});
  if (code !== 0) throw new Error(`The start line could not be read:\n${output}`);
  const { env, args } = JSON.parse(output) as { env: Record<string, string>; args: string[] };
  const baseline = new Set(['PATH', 'HOME', 'PWD', 'OLDPWD', 'SHLVL', '_']);
  return { env: Object.fromEntries(Object.entries(env).filter(([name]) => !baseline.has(name))), args };
}

async function stopApp(app: AppProcess): Promise<void> {
  await app.stop();
  stoppedApps.push(app);
}

async function start(step: Extract<DocumentedStep, { kind: 'start' }>): Promise<void> {
  const { env, args } = await startSettingsOf(step.command);
  const scheme = args.includes('--useHttps') ? 'https' : 'http';
  const previous = apps.get(scheme);
  if (previous) await stopApp(previous);
  apps.set(scheme, await startApp(env, { cwd: folder, args, timeoutMs: 60_000 }));
}

/** The shell state (exported variables) a reader's terminal keeps from one block to the next. */
const shellState = '.documented-shell-state';

async function run(step: Extract<DocumentedStep, { kind: 'run' }>): Promise<void> {
  const missing = missingToolsOf(step.block.text, readerPath);
  if (missing) throw new Error(`${step.block.where}: ${missing}`);
  const script = [`set -eo pipefail`, `[ -f "${shellState}" ] && . "./${shellState}"`, withLocalPorts(step.block.text), `export -p > "${shellState}"`].join(
    '\n',
  );
  const { code, output } = await bash(script, {});
  expect({ block: step.block.where, code, output }).toEqual({ block: step.block.where, code: 0, output: expect.any(String) });
  // An answer in the app's error shape means the block did not do what the document says.
  expect({ block: step.block.where, output }).toEqual({ block: step.block.where, output: expect.not.stringMatching(/"error"\s*:\s*\{/) });
}

beforeAll(async () => {
  // Under the repository, so that a script's imports (the JS SDK example) resolve from its node_modules.
  folder = mkdtempSync(join(repositoryRoot, 'dist', 'readme-example-commands-'));
  copyFileSync(resolve(repositoryRoot, 'local.settings.sample.json'), join(folder, 'local.settings.sample.json'));
  for (const step of steps)
    for (const [, port] of step.block.text.matchAll(/127\.0\.0\.1:(\d+)/g)) if (port !== '7071' && !ports.has(port!)) ports.set(port!, await freePort());
  for (const step of steps) if (step.kind === 'file') writeFileSync(join(folder, step.name), withLocalPorts(`${step.block.text}\n`, false));
});

afterAll(async () => {
  for (const app of apps.values()) await stopApp(app);
  rmSync(folder, { recursive: true, force: true });
});

it('finds local starts and commands to run, and says why each block it skips cannot run here', () => {
  expect(runnable.filter((step) => step.kind === 'start').length).toBeGreaterThan(0);
  expect(runnable.filter((step) => step.kind === 'run').length).toBeGreaterThan(0);
  for (const step of steps) if (step.kind === 'not run') expect(step.reason.length).toBeGreaterThan(10);
  // A tool a reader installs is no reason: the block runs, and fails here saying how to install it.
  const skippedForATool = steps.filter((step) => step.kind === 'not run' && /not installed|needs (azure-cli|python)/i.test(step.reason));
  expect(skippedForATool.map((step) => step.block.where)).toEqual([]);
});

describe.each(runnable.map((step) => [step.block.where, step] as const))('%s', (where, step) => {
  it(
    step.kind === 'start' ? `starts the app: ${step.command}` : 'runs as written',
    async () => {
      if (step.kind === 'start') await start(step);
      else if (step.kind === 'run') await run(step);
      ran.add(where);
    },
    180_000,
  );
});

it('ran every block not marked as one the tests cannot run', () => {
  expect(runnable.map((step) => step.block.where).filter((where) => !ran.has(where))).toEqual([]);
});

it('left no call answered with an error in any app it started', async () => {
  for (const app of apps.values()) await stopApp(app);
  apps.clear();
  const failed = stoppedApps.flatMap((app) => app.callRecords().filter((record) => Number(record.status) >= 400));
  expect(failed).toEqual([]);
});
