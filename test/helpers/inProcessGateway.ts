/**
 * The real registrations served by the local host inside the test process, over HTTP on
 * loopback, against the emulator and Azurite. For tests that send many requests (fuzzing,
 * abuse tables), where a child process per file would only add start-up time. Once per test
 * file: the registrations are loaded into that file's module registry.
 */
import { resetConfigForTests } from '../../src/settings/config';
import { azuriteConnectionString, type RunningAzurite } from '../../tools/embeddedAzurite';
import { setLogSink } from '../../tools/localHost/coreApi';
import { startLocalHost, type RunningHost } from '../../tools/localHost/localHost';
import type { Emulator, EmulatorOptions } from '../../tools/emulator/emulatorServer';
import { startDependencies } from '../../tools/harness/gatewayFixture';

export interface InProcessGateway {
  url: string;
  host: RunningHost;
  emulator: Emulator;
  azurite: RunningAzurite;
  logLines: string[];
  stop(): Promise<void>;
}

export interface InProcessOptions {
  /** The storage connection the app gets, given the Azurite started for it (a proxy in front, say). */
  storageConnection?: (azurite: RunningAzurite) => Promise<string>;
}

/**
 * A `storageConnection` through a proxy in front of Azurite's blob service (a counting or a
 * stalling one): `start` gets the service's host and port, `started` the proxy, and the app the
 * proxy's origin. Shared-key signatures do not cover the host, so they hold.
 */
export function storageBehind<Proxy extends { origin: string }>(
  start: (target: { host: string; port: number }) => Promise<Proxy>,
  started: (proxy: Proxy) => void,
) {
  return async (azurite: RunningAzurite): Promise<string> => {
    const blob = new URL(azurite.blobEndpoint);
    const proxy = await start({ host: blob.hostname, port: Number(blob.port) });
    started(proxy);
    return azuriteConnectionString(`${proxy.origin}/devstoreaccount1`);
  };
}

export async function startInProcessGateway(
  env: Record<string, string> = {},
  emulatorOptions: EmulatorOptions = {},
  options: InProcessOptions = {},
): Promise<InProcessGateway> {
  const { emulator, azurite, appEnv } = await startDependencies(env, emulatorOptions);
  if (options.storageConnection) appEnv.AzureWebJobsStorage = await options.storageConnection(azurite);
  Object.assign(process.env, appEnv);
  resetConfigForTests();
  const logLines: string[] = [];
  setLogSink((level, category, message) => logLines.push(`[${category}:${level}] ${message}`));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../../functions/index');
  const host = await startLocalHost({ routePrefix: 'api', runTimers: false });
  return {
    url: host.url,
    host,
    emulator,
    azurite,
    logLines,
    stop: async () => {
      await host.close();
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { getServices } = require('../../src/app/services') as typeof import('../../src/app/services');
      await getServices().upstreams.management.close();
      await emulator.close();
      await azurite.close();
    },
  };
}
