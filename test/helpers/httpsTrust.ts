/**
 * Trusting the certificate of an app started with `--useHttps`, the way its terminal says to:
 * the PEM whose path it printed.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import type { AppProcess } from '../../tools/harness/appProcess';

/** The path in the start-up line `Its PEM: <path>. Trust it…`. */
export function printedPemPath(app: AppProcess): string {
  const path = app.lines.map((line) => /Its PEM: (.+?)\. Trust it/.exec(line)?.[1]).find((found) => found !== undefined);
  if (!path) throw new Error(`The app printed no PEM path:\n${app.lines.join('\n')}`);
  return path;
}

export function printedPem(app: AppProcess): string {
  return readFileSync(printedPemPath(app), 'utf8');
}

/** An undici dispatcher that trusts this CA (and only it). */
export function trustingAgent(ca: string): Agent {
  return new Agent({ connect: { ca } });
}
