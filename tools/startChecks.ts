/**
 * What `npm start` checks and says around starting the local host: settings that would make a
 * half-embedded start, a port already taken, and what the terminal shows of the settings and
 * routes once it listens.
 */
import type { RunningHost } from './localHost/localHost';

export class StartRefused extends Error {}

const upstreamSettings = ['MANAGEMENT_BASE_URL', 'LIFECYCLE_BASE_URL'] as const;

/**
 * The embedded emulator stands in for both upstreams or for neither: with one of them set, it
 * would serve the other with its own static token, and that token would go to the real one too.
 */
export function refuseHalfUpstreams(env: NodeJS.ProcessEnv): void {
  const given = upstreamSettings.filter((name) => env[name]);
  if (given.length !== 1) return;
  const missing = upstreamSettings.find((name) => !env[name])!;
  throw new StartRefused(
    `${given[0]} is set but ${missing} is not. Set both MANAGEMENT_BASE_URL and LIFECYCLE_BASE_URL to use real upstreams, or neither to use the embedded emulator for both.`,
  );
}

/** A whole-number setting of the embedded emulator, checked before anything starts: a typo is named, not taken as NaN. */
function wholeNumber(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (!text) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new StartRefused(`${name} must be a whole number from ${min} to ${max}.`);
  return value;
}

/** The embedded emulator's settings, as its options. */
export function emulatorSettings(env: NodeJS.ProcessEnv) {
  return {
    port: wholeNumber('EMULATOR_PORT', env.EMULATOR_PORT, 1, 65535),
    lroSteps: wholeNumber('EMULATOR_LRO_STEPS', env.EMULATOR_LRO_STEPS, 0, 1000),
    retryAfterSeconds: wholeNumber('EMULATOR_RETRY_AFTER_SECONDS', env.EMULATOR_RETRY_AFTER_SECONDS, 0, 3600),
    listItems: wholeNumber('EMULATOR_LIST_ITEMS', env.EMULATOR_LIST_ITEMS, 0, 100_000),
    pageSize: wholeNumber('EMULATOR_PAGE_SIZE', env.EMULATOR_PAGE_SIZE, 1, 100_000),
  };
}

const hostPortChoices = 'npm start -- --port <N>, the PORT setting, or Host.LocalHttpPort in local.settings.json';

/** Runs `listen`, turning a port already in use into a message that says how to choose another. */
export async function listenOn<T>(port: number, listen: () => Promise<T>, choices = hostPortChoices): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new StartRefused(
      `Port ${port} on 127.0.0.1 is already in use (another npm start or func start?). Stop what holds it, or choose another port: ${choices}.`,
    );
  }
}

/**
 * The routes: their count and the anonymous ones, or with `--verbose` one line each. Routes in
 * `off` (a chat platform's route before it is set up, which answers 404) are not counted or
 * listed as served: the line names them as off.
 */
export function routeList(host: RunningHost, routePrefix: string, verbose: boolean, off: readonly string[] = []): string {
  const offNames = off.length > 1 ? `${off.slice(0, -1).join(', ')} and ${off.at(-1)}` : off.join('');
  const offNote = off.length === 0 ? '' : `${offNames} ${off.length === 1 ? 'is' : 'are'} off (404) until set up, as the settings above say`;
  if (verbose) {
    return [
      'Routes:',
      ...host.routes.map(
        (route) =>
          `  ${route.methods.join(',').padEnd(8)} /${routePrefix}/${route.route} (${route.name}, ${off.includes(route.name) ? 'off: answers 404' : route.authLevel})`,
      ),
      ...host.timers.map((timer) => `  TIMER    ${timer}`),
    ].join('\n');
  }
  const served = host.routes.filter((route) => !off.includes(route.name));
  const anonymous = served.filter((route) => route.authLevel === 'anonymous').map((route) => route.name);
  return (
    `Routes: ${served.length} under /${routePrefix}/ (anonymous: ${anonymous.join(', ') || 'none'}; the others need a function key${offNote ? `; ${offNote}` : ''}) and ` +
    `${host.timers.length} timer${host.timers.length === 1 ? '' : 's'} (${host.timers.join(', ')}); npm start -- --verbose lists each`
  );
}

/** The settings block: a title, then one aligned line per [label, value]. */
export function formatSummary(rows: readonly [string, string][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return ['Effective settings:', ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)].join('\n');
}
