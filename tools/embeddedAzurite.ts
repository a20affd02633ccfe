/**
 * Azurite's blob service in memory on a free loopback port, for `npm start` with no storage
 * configured and for tests. Azurite is the storage emulator Microsoft maintains; its server
 * classes are loaded directly so it can run in-process and stop with us.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningAzurite {
  connectionString: string;
  blobEndpoint: string;
  close(): Promise<void>;
}

/** Azurite in this process. */
export interface EmbeddedAzurite extends RunningAzurite {
  /** Calls `listener` with each request before Azurite handles it (tests see what was sent). */
  onRequest(listener: (request: IncomingMessage) => void): void;
}

export interface AzuriteOptions {
  port?: number;
  /**
   * Azurite's documented OAuth mode: over HTTPS (PEM files), a bearer token is checked (its
   * lifetime, issuer and storage audience; not its signature). Shared keys are still taken.
   */
  oauth?: { certPath: string; keyPath: string };
}

/** Azurite's well-known development account (public, documented; not a secret). */
const devAccount = 'devstoreaccount1';
const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export function azuriteConnectionString(blobEndpoint: string): string {
  return `DefaultEndpointsProtocol=${new URL(blobEndpoint).protocol.slice(0, -1)};AccountName=${devAccount};AccountKey=${devKey};BlobEndpoint=${blobEndpoint};`;
}

export async function startAzurite(options: AzuriteOptions = {}): Promise<EmbeddedAzurite> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const BlobServer = require('azurite/dist/src/blob/BlobServer').default;
  const BlobConfiguration = require('azurite/dist/src/blob/BlobConfiguration').default;
  /* eslint-enable @typescript-eslint/no-require-imports */
  // In-memory persistence still wants paths for its (unused) databases.
  const workDir = mkdtempSync(join(tmpdir(), 'azurite-'));
  const configuration = new BlobConfiguration(
    '127.0.0.1',
    options.port ?? 0,
    undefined,
    join(workDir, 'metadata.json'),
    join(workDir, 'extents.json'),
    [{ locationId: 'Default', locationPath: join(workDir, 'data'), maxConcurrency: 1 }],
    false,
    undefined,
    false,
    undefined,
    false,
    true, // skipApiVersionCheck: the SDK may be newer than this Azurite
    options.oauth?.certPath ?? '',
    options.oauth?.keyPath ?? '',
    '',
    options.oauth ? 'basic' : undefined,
    false,
    true, // in-memory persistence
  );
  const server = new BlobServer(configuration);
  await server.start();
  const address = new URL(server.getHttpServerAddress() as string);
  const blobEndpoint = `${address.protocol}//127.0.0.1:${address.port}/${devAccount}`;
  return {
    connectionString: azuriteConnectionString(blobEndpoint),
    blobEndpoint,
    onRequest: (listener) => (server.httpServer as Server).prependListener('request', listener),
    close: async () => {
      await server.close();
      await server.clean();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
