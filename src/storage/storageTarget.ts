/**
 * The client of every storage use of the app, built from the storage the settings name
 * (src/settings/storageSettings.ts): a connection string, or an identity signing in as the
 * Functions host does for its own storage. One place builds it, so no storage use can fall back
 * to a key on its own.
 */
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient } from '@azure/storage-blob';
import { credentialOnFirstUse, managedIdentityOnFirstUse } from '../identity';
import { storageBlobPackage } from '../loading';
import type { StorageTarget } from '../settings';

/** The credential of an identity-based target, built (and @azure/identity loaded) at its first token. */
function credentialOf(target: Extract<StorageTarget, { kind: 'identity' }>, tokenTimeoutMs: number): TokenCredential {
  if (target.credential === 'default') return credentialOnFirstUse((identity) => new identity.DefaultAzureCredential(), tokenTimeoutMs, 'storage');
  return managedIdentityOnFirstUse(target, tokenTimeoutMs, 'storage');
}

/** The client of every storage use of the app. */
export function blobServiceOf(target: StorageTarget, tokenTimeoutMs: number): BlobServiceClient {
  const { BlobServiceClient } = storageBlobPackage();
  if (target.kind === 'connectionString') return BlobServiceClient.fromConnectionString(target.connectionString);
  return new BlobServiceClient(target.blobServiceUri, credentialOf(target, tokenTimeoutMs));
}
