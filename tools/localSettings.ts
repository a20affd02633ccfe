/**
 * `local.settings.json` as Core Tools reads it for `func start`: each of its `Values` becomes an
 * environment variable of the host unless the environment already has that variable (the
 * environment wins), and `Host.LocalHttpPort` is the default port. Values encrypted by
 * `func settings encrypt` (`IsEncrypted: true`) are refused: their key is the machine's.
 *
 * jsonc-parser reads the file: it tolerates comments, as Core Tools' Json.NET does, and reports
 * where the file is broken by offset, without quoting it (a settings file holds secrets, and
 * JSON.parse's messages quote the text around the error).
 */
import { readFileSync } from 'node:fs';
import type * as JsoncParser from 'jsonc-parser';
import type { ParseError } from 'jsonc-parser';

export const localSettingsFile = 'local.settings.json';

export interface AppliedLocalSettings {
  /** Names set from the file. */
  applied: string[];
  /** Names the file gives but the environment already had. */
  keptFromEnvironment: string[];
  /** `Host.LocalHttpPort`, when the file sets it. */
  localHttpPort?: number;
}

export class LocalSettingsError extends Error {}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** The parser, loaded when there is a file to read: most starts have none, and it takes ~7 ms to load. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const jsoncParser = () => require('jsonc-parser') as typeof JsoncParser;

/** `CommaExpected` → `comma expected`. */
function describeParseError(error: ParseError): string {
  return jsoncParser()
    .printParseErrorCode(error.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The file's settings, checked; undefined when there is no file. */
export function readLocalSettings(path: string): { values: Record<string, string>; localHttpPort?: number } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LocalSettingsError(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  const errors: ParseError[] = [];
  const settings = jsoncParser().parse(text, errors, { disallowComments: false, allowTrailingComma: false }) as unknown;
  const first = errors[0];
  if (first) {
    const { line, column } = lineAndColumn(text, first.offset);
    throw new LocalSettingsError(`${path} is not valid JSON: line ${line}, column ${column}: ${describeParseError(first)}.`);
  }
  if (!isPlainObject(settings)) throw new LocalSettingsError(`${path} must hold a JSON object: { "IsEncrypted": false, "Values": { … } }.`);
  if (settings.IsEncrypted === true) {
    throw new LocalSettingsError(
      `${path} has "IsEncrypted": true. Its Values were encrypted by \`func settings encrypt\` with a key of the machine that did it, which this host cannot read: ` +
        'decrypt them (`func settings decrypt`), or write them in plain text and set "IsEncrypted": false.',
    );
  }
  const values = settings.Values ?? {};
  if (!isPlainObject(values)) throw new LocalSettingsError(`${path}: "Values" must be an object of setting names to strings.`);
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    // Json.NET reads numbers and booleans into the string settings; objects and arrays it refuses.
    if (!['string', 'number', 'boolean'].includes(typeof value)) throw new LocalSettingsError(`${path}: Values.${name} must be a string.`);
    checked[name] = String(value);
  }
  const port = isPlainObject(settings.Host) ? settings.Host.LocalHttpPort : undefined;
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
    throw new LocalSettingsError(`${path}: Host.LocalHttpPort must be a port number from 0 to 65535.`);
  }
  return { values: checked, localHttpPort: port as number | undefined };
}

/** Sets the file's values the environment does not have. */
export function applyLocalSettings(path: string, env: NodeJS.ProcessEnv): AppliedLocalSettings | undefined {
  const settings = readLocalSettings(path);
  if (!settings) return undefined;
  const applied: string[] = [];
  const keptFromEnvironment: string[] = [];
  for (const [name, value] of Object.entries(settings.values)) {
    if (env[name] !== undefined) {
      keptFromEnvironment.push(name);
    } else {
      env[name] = value;
      applied.push(name);
    }
  }
  return { applied, keptFromEnvironment, localHttpPort: settings.localHttpPort };
}
