/**
 * The usual end-to-end set-up: the emulator and Azurite in the test process, the built app in
 * a child process pointed at them.
 */
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { startEmulator, type Emulator, type EmulatorOptions } from '../emulator/emulatorServer';
import { startApp, type AppProcess } from './appProcess';

export interface GatewayFixture {
  emulator: Emulator;
  azurite: RunningAzurite;
  app: AppProcess;
  /** The environment the app was started with, to start more instances like it. */
  env: Record<string, string>;
  api(path: string): string;
  stop(): Promise<void>;
}

export const emulatorToken = 'emulator-token';

export async function startGateway(env: Record<string, string> = {}, emulatorOptions: EmulatorOptions = {}): Promise<GatewayFixture> {
  const emulator = await startEmulator({ token: emulatorToken, ...emulatorOptions });
  const azurite = await startAzurite();
  const appEnv = {
    MANAGEMENT_BASE_URL: emulator.url,
    LIFECYCLE_BASE_URL: emulator.url,
    UPSTREAM_AUTH: 'static',
    UPSTREAM_STATIC_TOKEN: emulatorToken,
    AzureWebJobsStorage: azurite.connectionString,
    ...env,
  };
  const app = await startApp(appEnv);
  return {
    emulator,
    azurite,
    app,
    env: appEnv,
    api: (path) => `${app.url}/api/${path.replace(/^\//, '')}`,
    stop: async () => {
      await app.stop();
      await emulator.close();
      await azurite.close();
    },
  };
}
