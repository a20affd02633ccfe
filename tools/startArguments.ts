/**
 * The options of `npm start -- …`, named as Core Tools' `func start` names them:
 * `--useHttps [--cert file.pfx --password <password or file>] [--port N]` (`-p N`), and
 * `--verbose` (every route listed at start; Core Tools has the same option), and the local host's
 * own `--traces` (each trace printed in the terminal: tools/traceViewer.ts).
 *
 * Messages name the option, never the value given: a mistyped `--pasword secret` must not put
 * the secret on the terminal.
 */
import { parseArgs } from 'node:util';

export interface StartArguments {
  useHttps: boolean;
  cert?: string;
  password?: string;
  port?: number;
  /** List every route at start, not only their count. */
  verbose: boolean;
  /** Export traces to the terminal (tools/traceViewer.ts). */
  traces: boolean;
}

export class StartArgumentError extends Error {}

const startUsage = 'npm start -- [--useHttps [--cert <file.pfx> --password <password, or a file holding it>]] [--port <N>] [--verbose] [--traces]';

const options = {
  useHttps: { type: 'boolean' },
  cert: { type: 'string' },
  password: { type: 'string' },
  port: { type: 'string', short: 'p' },
  verbose: { type: 'boolean' },
  traces: { type: 'boolean' },
} as const;

function fail(problem: string): never {
  throw new StartArgumentError(`${problem}\nUsage: ${startUsage}`);
}

export function parseStartArguments(args: readonly string[]): StartArguments {
  // Not strict: parseArgs' own messages quote what was typed, and that may be a password.
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const given: Record<string, string | true> = {};
  for (const token of tokens) {
    if (token.kind === 'positional') fail(`Unexpected argument number ${token.index + 1}: options take the form --name value.`);
    if (token.kind !== 'option') continue;
    const option = options[token.name as keyof typeof options] as (typeof options)[keyof typeof options] | undefined;
    if (!option) fail(`Unknown option ${token.rawName.startsWith('--') ? `--${token.name}` : `-${token.name}`}.`);
    if (option.type === 'boolean' && token.value !== undefined) fail(`--${token.name} takes no value.`);
    if (option.type === 'string' && (token.value === undefined || token.value === '')) fail(`--${token.name} needs a value.`);
    given[token.name] = token.value ?? true;
  }
  const { cert, password, port } = given as { cert?: string; password?: string; port?: string };
  const useHttps = given.useHttps === true;
  if ((cert !== undefined || password !== undefined) && !useHttps) fail('--cert and --password are for use with --useHttps.');
  if (cert !== undefined && password === undefined) fail('--cert needs --password: the password of the .pfx, or the path of a file holding it.');
  if (password !== undefined && cert === undefined) fail('--password needs --cert: the .pfx file it opens.');
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) <= 65535)) fail('--port must be a port number from 0 to 65535.');
  return { useHttps, cert, password, port: port === undefined ? undefined : Number(port), verbose: given.verbose === true, traces: given.traces === true };
}
