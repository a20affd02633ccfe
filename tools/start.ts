/**
 * `npm start`: serves the built function app (dist/functions/index.js, the bundle the real
 * host loads) through the local host, as `func start` does: `local.settings.json` of the
 * current folder read first, then `--useHttps [--cert --password] [--port]` (startArguments.ts).
 * With no upstream or storage configured it starts the embedded defaults first: the management
 * emulator and Azurite in memory.
 *
 * Prints one line per service it starts, then `Functions host listening on <url>`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Emulator } from './emulator/emulatorServer';
import type { EmbeddedServices } from '../src/app';
import { azureMarkerOf } from '../src/settings';
import { startAzurite, type RunningAzurite } from './embeddedAzurite';
import type { HttpsCertificate } from './localHost/httpsCertificate';
import { installFunctionsCore } from './localHost/installCore';
import { startLocalHost, type RunningHost } from './localHost/localHost';
import { parseLocalHostKeys } from './localHostKeys';
import { applyLocalSettings, localSettingsFile } from './localSettings';
import { parseStartArguments, type StartArguments } from './startArguments';
import { emulatorSettings, formatSummary, listenOn, refuseHalfUpstreams, routeList, StartRefused } from './startChecks';
import type { TraceViewer } from './traceViewer';

/**
 * The function app served: the current folder when it holds a host.json (as `func start` serves
 * the folder it runs in: an unpacked deployment package, say), else this repository.
 */
const appRoot = existsSync('host.json') ? process.cwd() : resolve(__dirname, '..', '..');

/** The local start for the Azure SDKs and az, as the README gives it. */
const sdkStartHint =
  'For the Azure SDKs and az (Microsoft.* paths, over HTTPS): PROVIDER_NAMESPACE=Microsoft npm start -- --useHttps (README, "The local start for SDKs and az").';

interface Started {
  emulator?: Emulator;
  azurite?: RunningAzurite;
  host?: RunningHost;
  traces?: TraceViewer;
}

function routePrefixOf(hostJsonPath: string): string {
  const hostJson = JSON.parse(readFileSync(hostJsonPath, 'utf8')) as { extensions?: { http?: { routePrefix?: string } } };
  return hostJson.extensions?.http?.routePrefix ?? 'api';
}

/**
 * The emulator and the HTTPS certificate tools are imported only when used: with node-forge and
 * fflate they would add tens of milliseconds to every start (the bench's first-response figure).
 */
async function httpsCertificateOf(args: StartArguments): Promise<HttpsCertificate | undefined> {
  if (!args.useHttps) return undefined;
  const { generatedCertificate, generatedCertificateFolder, pfxCertificate } = await import('./localHost/httpsCertificate');
  return args.cert && args.password ? pfxCertificate(args.cert, args.password) : generatedCertificate(resolve(generatedCertificateFolder));
}

/**
 * `--traces`: the app exports its traces to a receiver in this process, which prints each as a
 * tree (tools/traceViewer.ts), as it would to a collector; the batches go out every half second
 * unless OTEL_BSP_SCHEDULE_DELAY says otherwise, so a call's trace shows as it ends.
 */
async function startTraces(env: NodeJS.ProcessEnv): Promise<TraceViewer> {
  const exporting = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'].filter((name) => env[name]);
  if (exporting.length > 0)
    throw new StartRefused(`--traces prints the traces here instead of exporting them, and ${exporting.join(' and ')} is set too: leave out one or the other.`);
  const { startTraceViewer } = await import('./traceViewer');
  const viewer = await startTraceViewer((text) => console.log(text));
  env.OTEL_EXPORTER_OTLP_ENDPOINT = viewer.url;
  env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  env.OTEL_BSP_SCHEDULE_DELAY ||= '500';
  return viewer;
}

async function main(): Promise<Started> {
  const started: Started = {};
  const env = process.env;
  const args = parseStartArguments(process.argv.slice(2));
  const localSettings = applyLocalSettings(resolve(localSettingsFile), env);
  if (localSettings) {
    const { applied, keptFromEnvironment: kept } = localSettings;
    console.log(
      `Read ${applied.length} setting${applied.length === 1 ? '' : 's'} from ${localSettingsFile}${kept.length > 0 ? ` (the environment's own kept for ${kept.join(', ')})` : ''}`,
    );
  }
  const certificate = await httpsCertificateOf(args);
  const shutdown = async (code: number) => {
    await started.host?.close().catch(() => undefined);
    await started.traces?.close().catch(() => undefined);
    await started.emulator?.close().catch(() => undefined);
    await started.azurite?.close().catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  // Settings of the local host itself are checked before anything is started.
  refuseHalfUpstreams(env);
  const keys = parseLocalHostKeys(env.LOCAL_HOST_KEYS);
  if (args.traces) started.traces = await startTraces(env);
  if (!env.MANAGEMENT_BASE_URL && !env.LIFECYCLE_BASE_URL) {
    const { startEmulator } = await import('./emulator/emulatorServer');
    const emulator = emulatorSettings(env);
    started.emulator = await listenOn(
      emulator.port ?? 0,
      () => startEmulator({ providerNamespace: env.PROVIDER_NAMESPACE || 'Vendor', token: env.UPSTREAM_STATIC_TOKEN || 'emulator-token', ...emulator }),
      'the EMULATOR_PORT setting (or leave it unset for a free one)',
    );
    env.MANAGEMENT_BASE_URL = started.emulator.url;
    env.LIFECYCLE_BASE_URL = started.emulator.url;
    env.UPSTREAM_AUTH ||= 'static';
    env.UPSTREAM_STATIC_TOKEN ||= 'emulator-token';
    // The Azure SDKs and az call Microsoft.* paths and send tokens over HTTPS only.
    if (env.PROVIDER_NAMESPACE !== 'Microsoft') console.log(sdkStartHint);
  }
  // Storage named in any form the host reads, or an instance in Azure (which must name its own:
  // the app refuses to start there without it), starts no embedded Azurite.
  const storageNamed = env.AzureWebJobsStorage || env.AzureWebJobsStorage__accountName || env.AzureWebJobsStorage__blobServiceUri || azureMarkerOf(env);
  if (!storageNamed) {
    started.azurite = await startAzurite();
    env.AzureWebJobsStorage = started.azurite.connectionString;
  }

  installFunctionsCore();
  const appEntry = resolve(appRoot, env.FUNCTIONS_APP_ENTRY || JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')).main);
  console.log(`Function app: ${appEntry}`);
  let app: { settingsSummary?: (embedded: EmbeddedServices) => [string, string][]; routesOff?: () => string[] } = {};
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    app = require(appEntry);
  } catch (error) {
    console.error(`The function app failed to load: ${(error as Error).message}`);
    await shutdown(1);
  }

  const routePrefix = routePrefixOf(join(appRoot, 'host.json'));
  // As Core Tools: --port, else the PORT setting, else local.settings.json's Host.LocalHttpPort.
  const port = args.port ?? Number(env.PORT ?? localSettings?.localHttpPort ?? 7071);
  started.host = await listenOn(port, () => startLocalHost({ routePrefix, keys, runTimers: env.LOCAL_HOST_TIMERS !== 'off', tls: certificate?.tls }, port));
  const embedded = { upstream: started.emulator?.url, storage: started.azurite?.blobEndpoint };
  const keysRow: [string, string] = [
    'function keys',
    keys
      ? `checked (LOCAL_HOST_KEYS: ${Object.keys(keys).length})`
      : 'not checked, as with Core Tools: set LOCAL_HOST_KEYS to check them as the real host does',
  ];
  // An app package built before the summary existed has none: its start simply goes without.
  if (app.settingsSummary) console.log(formatSummary([...app.settingsSummary(embedded), keysRow]));
  console.log(routeList(started.host, routePrefix, args.verbose, app.routesOff?.()));
  if (certificate) {
    const { trustHints } = await import('./localHost/httpsCertificate');
    console.log([certificate.description, ...(certificate.pemPath ? trustHints(certificate.pemPath) : [])].join('\n'));
  }
  if (started.traces) console.log('Traces: each printed here as a tree as it arrives (--traces); docs/observability.md says what each span is.');
  console.log(`Functions host listening on ${started.host.url}`);
  return started;
}

main().catch((error: unknown) => {
  console.error((error as Error).message);
  process.exit(1);
});
