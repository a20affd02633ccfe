/**
 * Azurite's blob service in memory on a free loopback port, for `npm start` with no storage
 * configured and for tests. Azurite is the storage emulator Microsoft maintains; its server
 * classes are loaded directly so it can run in-process and stop with us.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningAzurite {
  connectionString: string;
  blobEndpoint: string;
  close(): Promise<void>;
}

/** Azurite's well-known development account (public, documented; not a secret). */
const devAccount = 'devstoreaccount1';
const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export function azuriteConnectionString(blobEndpoint: string): string {
  return `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};BlobEndpoint=${blobEndpoint};`;
}

export async function startAzurite(port = 0): Promise<RunningAzurite> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const BlobServer = require('azurite/dist/src/blob/BlobServer').default;
  const BlobConfiguration = require('azurite/dist/src/blob/BlobConfiguration').default;
  /* eslint-enable @typescript-eslint/no-require-imports */
  // In-memory persistence still wants paths for its (unused) databases.
  const workDir = mkdtempSync(join(tmpdir(), 'azurite-'));
  const configuration = new BlobConfiguration(
    '127.0.0.1', port, undefined,
    join(workDir, 'metadata.json'), join(workDir, 'extents.json'),
    [{ locationId: 'Default', locationPath: join(workDir, 'data'), maxConcurrency: 1 }],
    false, undefined, false, undefined, false,
    true, // skipApiVersionCheck: the SDK may be newer than this Azurite
    '', '', '', undefined, false,
    true, // in-memory persistence
  );
  const server = new BlobServer(configuration);
  await server.start();
  const address = new URL(server.getHttpServerAddress() as string);
  const blobEndpoint = `http://127.0.0.1:${address.port}/${devAccount}`;
  return {
    connectionString: azuriteConnectionString(blobEndpoint),
    blobEndpoint,
    close: async () => {
      await server.close();
      await server.clean();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
