/**
 * Runs the built app (dist/) through the local host in a child process, as `npm start` does,
 * and collects what it prints. The process picks a free port and is stopped by `stop()`.
 *
 * It runs in a folder of its own (an empty temporary one unless `cwd` is given), as `func start`
 * runs in the app's folder: a developer's own `local.settings.json` or `.local-https/` in the
 * repository never reaches a test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface AppProcess {
  url: string;
  /** Every line printed so far, stdout and stderr. */
  lines: string[];
  /** The structured call records printed so far. */
  callRecords(): Record<string, unknown>[];
  stop(): Promise<void>;
  kill(): Promise<void>;
  child: ChildProcess;
  /** The folder it runs in. */
  cwd: string;
}

export interface AppProcessOptions {
  /** Command-line arguments, as after `npm start --`. */
  args?: string[];
  /** The folder to run in; by default a new empty one, removed when the process ends. */
  cwd?: string;
  timeoutMs?: number;
  /** A bash command line to run instead of the start script (a command as a document gives it). */
  shellCommand?: string;
  /** The Node executable to run it with; by default the one running the tests. */
  node?: string;
}

const startScript = resolve(__dirname, '..', '..', 'dist', 'tools', 'start.js');

function spawnStart(env: Record<string, string>, options: AppProcessOptions) {
  const cwd = options.cwd ?? mkdtempSync(join(tmpdir(), 'gateway-app-'));
  const [program, args] = options.shellCommand
    ? ['bash', ['-c', options.shellCommand]]
    : [options.node ?? process.execPath, [startScript, ...(options.args ?? [])]];
  const child = spawn(program, args, {
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!options.cwd) child.once('exit', () => rmSync(cwd, { recursive: true, force: true }));
  return { child, cwd };
}

export async function startApp(env: Record<string, string>, options: AppProcessOptions = {}): Promise<AppProcess> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const { child, cwd } = spawnStart(env, options);
  const lines: string[] = [];
  let partial = '';
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`The app did not start in ${timeoutMs} ms:\n${lines.join('\n')}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const complete = partial.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete) {
        lines.push(line);
        const match = /Functions host listening on (\S+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1]!);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`The app exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url,
    lines,
    child,
    cwd,
    callRecords: () =>
      lines
        .map((line) => /(\{"event":"call".*\})\s*$/.exec(line)?.[1])
        .filter((json): json is string => json !== undefined)
        .map((json) => JSON.parse(json) as Record<string, unknown>),
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
  };
}

/** Runs the start script expecting it to fail; resolves with its exit code and output. */
export async function runAppExpectingFailure(env: Record<string, string>, options: AppProcessOptions = {}): Promise<{ code: number | null; output: string }> {
  const { child } = spawnStart(env, options);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolveExit) => child.once('exit', (exitCode) => resolveExit(exitCode)));
  clearTimeout(timer);
  return { code, output };
}
