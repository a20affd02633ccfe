/**
 * Runs calls through the built telemetry file (dist/functions/exportSdk.js, as the
 * app loads it) in a process of its own: the exporters' HTTP transport imports node:http
 * dynamically, which jest's module sandbox refuses. `script` is the body of an async function
 * given `running` (what startExport answered, set up with `settings`) and `call(operation,
 * answer, traceParent?)`, which runs a handler answering `answer` as an incoming call; the
 * process then shuts the export down, which sends what is buffered.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const sdkFile = resolve(__dirname, '..', '..', 'dist', 'functions', 'exportSdk.js');

export async function runExportScenario(settings: Record<string, unknown>, script: string, env: Record<string, string> = {}): Promise<void> {
  const program = `
const running = require(${JSON.stringify(sdkFile)}).startExport(${JSON.stringify(settings)});
const call = (operation, answer, traceParent) => running.instrumentation.traceIncoming(operation, async () => answer)(
  { method: 'GET', url: 'http://127.0.0.1/api/' + operation + '?code=CANARY-SECRET-key', headers: new Headers() },
  { traceContext: traceParent ? { traceParent } : undefined },
);
(async () => {
${script}
  await running.shutdown();
})();
`;
  await promisify(execFile)(process.execPath, ['-e', program], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 });
}
