/**
 * The usual end-to-end set-up: the emulator and Azurite in the test process, the built app in
 * a child process pointed at them.
 */
import { startAzurite, type RunningAzurite } from '../embeddedAzurite';
import { startEmulator, type Emulator, type EmulatorOptions } from '../emulator/emulatorServer';
import { startApp, type AppProcess, type AppProcessOptions } from './appProcess';
import { scanForSecrets } from './secretScan';

export interface GatewayFixture {
  emulator: Emulator;
  azurite: RunningAzurite;
  app: AppProcess;
  /** The environment the app was started with, to start more instances like it. */
  env: Record<string, string>;
  /** Other instances started for the test: their output is scanned for secrets too. */
  others: AppProcess[];
  api(path: string): string;
  stop(): Promise<void>;
}

export const emulatorToken = 'emulator-token';

/** Settings of a run whose orchestrations are polled every second and notify `origin`, signed with `secret`. */
export function notifyingFastPolling(origin: string, secret: string): Record<string, string> {
  return {
    ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
    LRO_MIN_POLL_SECONDS: '1',
    LRO_DEFAULT_POLL_SECONDS: '1',
    NOTIFY_ALLOWED_ORIGINS: JSON.stringify([origin]),
    NOTIFY_SIGNING_SECRET: secret,
  };
}

/** The secrets among an app's settings: the notification signing key and the function keys. */
function secretSettingsOf(env: Record<string, string>): string[] {
  const keys = env.LOCAL_HOST_KEYS ? Object.values(JSON.parse(env.LOCAL_HOST_KEYS) as Record<string, string>) : [];
  const signing = env.NOTIFY_SIGNING_SECRET ? [env.NOTIFY_SIGNING_SECRET, env.NOTIFY_SIGNING_SECRET.replace(/^whsec_/, '')] : [];
  return [...keys, ...signing];
}

/** The emulator and Azurite started for a test, and the settings that point the app at them. */
export async function startDependencies(env: Record<string, string>, emulatorOptions: EmulatorOptions) {
  const emulator = await startEmulator({ token: emulatorToken, ...emulatorOptions });
  const azurite = await startAzurite();
  const appEnv: Record<string, string> = {
    MANAGEMENT_BASE_URL: emulator.url,
    LIFECYCLE_BASE_URL: emulator.url,
    UPSTREAM_AUTH: 'static',
    UPSTREAM_STATIC_TOKEN: emulatorToken,
    AzureWebJobsStorage: azurite.connectionString,
    ...env,
  };
  return { emulator, azurite, appEnv };
}

export async function startGateway(
  env: Record<string, string> = {},
  emulatorOptions: EmulatorOptions = {},
  appOptions: AppProcessOptions = {},
): Promise<GatewayFixture> {
  const { emulator, azurite, appEnv } = await startDependencies(env, emulatorOptions);
  let app: AppProcess;
  try {
    app = await startApp(appEnv, appOptions);
  } catch (error) {
    // An app that does not start must not leave its dependencies holding the test run open.
    await emulator.close();
    await azurite.close();
    throw error;
  }
  const fixture: GatewayFixture = {
    emulator,
    azurite,
    app,
    env: appEnv,
    others: [],
    api: (path) => `${app.url}/api/${path.replace(/^\//, '')}`,
    async stop() {
      await app.stop();
      // Every run ends with a search for secrets in what the app printed and stored.
      const findings = await scanForSecrets({
        lines: [...app.lines, ...this.others.flatMap((other) => other.lines)],
        connectionString: azurite.connectionString,
        secrets: [emulatorToken, ...emulator.context.lifecycle.issuedSecrets, ...secretSettingsOf(appEnv)],
        allowedContainers: ['gateway-certificate-secrets'],
      });
      await emulator.close();
      await azurite.close();
      if (findings.length > 0) throw new Error(`Secrets found where they must not be: ${JSON.stringify(findings)}`);
    },
  };
  return fixture;
}
