/**
 * Packages only some calls need, loaded by the first of them instead of at start: a cold start
 * pays to read, compile and run every file it loads. The app's identity (`managed`
 * mode, the lifecycle user credential), blob storage (long-running operations, certificates,
 * health, the poller), the certificate check's zip and PKCS#12 readers, and the OpenTelemetry
 * SDK with its exporters (only when an exporter is configured: src/telemetry/sdkOnFirstUse.ts loads
 * src/telemetry/exportSdk.ts, a module of the app's own, which the build turns into a file of its
 * own like a package).
 *
 * In the bundle each is a file of its own beside index.js (tools/build.mjs turns these requires
 * into requires of it, and refuses a plain import of the same package); run from source, it is
 * the package. Each is resolved when this module loads, which only finds the file: a deployment
 * without one fails at start, not at its first call.
 */
import type * as Identity from '@azure/identity';
import type * as StorageBlob from '@azure/storage-blob';
import type * as Forge from 'node-forge';
import type * as Yauzl from 'yauzl';

/**
 * A loader of the file at `path` (from require.resolve, which runs at start and throws when the
 * file is missing), which loads it on its first call.
 */
export function onFirstUse<Package>(path: string): () => Package {
  let loaded: Package | undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return () => (loaded ??= require(path) as Package);
}

export const identityPackage = onFirstUse<typeof Identity>(require.resolve('@azure/identity'));
export const storageBlobPackage = onFirstUse<typeof StorageBlob>(require.resolve('@azure/storage-blob'));
export const forgePackage = onFirstUse<typeof Forge>(require.resolve('node-forge'));
export const yauzlPackage = onFirstUse<typeof Yauzl>(require.resolve('yauzl'));
