/**
 * The operator console's files (the page, its script and its style sheet), built by
 * tools/build.mjs beside the app's bundle and read from disk when asked for: the console's code
 * never enters the app's bundle, so the API's start-up reads and compiles none of it.
 *
 * Every answer of the console's routes (its errors and the keyed session too, see
 * withConsoleHeaders) carries a Content-Security-Policy that allows only the app's own origin for
 * scripts, styles and fetches (images may be `data:` too: the page's icon is one, so that no
 * /favicon.ico is asked for), no inline script, no framing: whatever a stored value holds,
 * the page renders it as text (textContent), and the policy stops any script it might smuggle.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GatewayError } from '../errors';

/** The files served, by the name in `console/assets/{file}`; the page itself is `console.html`. */
const contentTypes: Record<string, string> = {
  'console.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

const consoleSecurityHeaders: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // The files change with each build; a browser asks again (a 304-free read of a few KB).
  'cache-control': 'no-cache',
};

/**
 * Where the built files are: beside the bundle (dist/functions, and the deployed package), or,
 * when the app runs from source (in-process tests), in dist/functions of the repository.
 */
const folders = () => [__dirname, join(__dirname, '..', 'dist', 'functions'), join(__dirname, '..', '..', 'dist', 'functions')];

const cache = new Map<string, Buffer>();

async function readBuilt(name: string): Promise<Buffer | undefined> {
  const cached = cache.get(name);
  if (cached) return cached;
  for (const folder of folders()) {
    try {
      const bytes = await readFile(join(folder, name));
      cache.set(name, bytes);
      return bytes;
    } catch {
      // Not in this folder: the next candidate.
    }
  }
  return undefined;
}

/** The answer for one console file: its bytes with the console's security headers. */
async function consoleFileResponse(name: string) {
  const contentType = contentTypes[name];
  if (!contentType) throw new GatewayError('NotFound', 'The console has no such file: open /api/console.', { target: 'file' });
  const body = await readBuilt(name);
  if (!body) throw new GatewayError('NotFound', "The console's files are not built beside the app: run `npm run build`.", { target: 'file' });
  return { status: 200, headers: { 'content-type': contentType }, body };
}

type Handler = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/**
 * A console route's handler whose every answer, an error included, carries the console's
 * security headers (and `extra`, which wins): a refusal or a 404 is as unframable and unsniffable
 * as the page.
 */
export function withConsoleHeaders(handler: Handler, extra: Record<string, string> = {}): Handler {
  return async (request, context) => {
    const response = await handler(request, context);
    return { ...response, headers: { ...(response.headers as Record<string, string> | undefined), ...consoleSecurityHeaders, ...extra } };
  };
}

/**
 * The page, at `console`. At `console/` (where the host serves it too) its relative links would
 * name `console/console/assets/…`: the answer sends the browser to `../console` instead, a
 * relative address, right behind any proxy or APP_PUBLIC_URL (the fragment, `#/health`, is kept).
 */
export async function consolePageResponse(url: string): Promise<HttpResponseInit> {
  if (new URL(url).pathname.endsWith('/')) return { status: 301, headers: { location: '../console' } };
  return consoleFileResponse('console.html');
}

/** `console/assets/{file}`: the script or the style sheet, nothing else. */
export const consoleAssetResponse = (file: string | undefined) => consoleFileResponse(file === 'console.js' || file === 'console.css' ? file : '');
