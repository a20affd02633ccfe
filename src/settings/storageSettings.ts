/**
 * Where the app's blob storage is and how it signs in, read from the settings the Functions host
 * reads for its own storage: `AzureWebJobsStorage` as a connection string, or its identity-based
 * form (`AzureWebJobsStorage__accountName` or `__blobServiceUri`, with `__credential` set to
 * `managedidentity` and `__clientId` naming a user-assigned identity), as Microsoft's "Connecting
 * to host storage with an identity" describes. The app then uses the same storage the host does,
 * signed in the same way, for everything it keeps (orchestrations, certificates, health, the
 * poller). Only the settings are read here; src/storage/storageTarget.ts builds the client.
 */
import { azureMarkerOf } from './azureMarkers';

/** The storage settings, each already valid on its own (config.ts). */
export interface StorageSettings {
  AzureWebJobsStorage?: string;
  AzureWebJobsStorage__accountName?: string;
  AzureWebJobsStorage__blobServiceUri?: string;
  AzureWebJobsStorage__credential?: 'managedidentity';
  AzureWebJobsStorage__clientId?: string;
  AzureWebJobsStorage__managedIdentityResourceId?: string;
  /** Set by the platform in Azure: which is set depends on the plan (azureMarkers.ts). */
  WEBSITE_INSTANCE_ID?: string;
  WEBSITE_SKU?: string;
  WEBSITE_POD_NAME?: string;
}

export type StorageTarget =
  | { kind: 'connectionString'; connectionString: string }
  | {
      kind: 'identity';
      blobServiceUri: string;
      /** `managedidentity`: the platform's identity only; otherwise DefaultAzureCredential's chain (a developer's sign-in). */
      credential: 'managedidentity' | 'default';
      /** The user-assigned identity, by its client id or its resource id; neither: the system-assigned one. */
      clientId?: string;
      resourceId?: string;
    };

/** What a start outside Azure uses with no storage setting: Azurite on its default ports, as Core Tools does. */
export const developmentStorage = 'UseDevelopmentStorage=true';

const identitySettingsHint =
  'AzureWebJobsStorage__accountName with AzureWebJobsStorage__credential=managedidentity (and AzureWebJobsStorage__clientId for a user-assigned identity)';

/** Why these settings name no storage, or name it twice; an empty list when they are usable. */
export function storageProblems(settings: StorageSettings): string[] {
  const { AzureWebJobsStorage: connection, AzureWebJobsStorage__accountName: account, AzureWebJobsStorage__blobServiceUri: uri } = settings;
  const identityBased = account !== undefined || uri !== undefined;
  const problems: string[] = [];
  if (connection !== undefined && identityBased) {
    problems.push(
      'AzureWebJobsStorage (a connection string) and AzureWebJobsStorage__accountName or __blobServiceUri (identity-based) are both set: keep one, the identity-based settings need no key',
    );
  }
  if (account !== undefined && uri !== undefined)
    problems.push(
      'AzureWebJobsStorage__accountName and AzureWebJobsStorage__blobServiceUri are both set: keep one (__blobServiceUri for a cloud other than Azure public)',
    );
  if (
    !identityBased &&
    (settings.AzureWebJobsStorage__credential || settings.AzureWebJobsStorage__clientId || settings.AzureWebJobsStorage__managedIdentityResourceId)
  ) {
    problems.push(
      'AzureWebJobsStorage__credential, __clientId and __managedIdentityResourceId go with AzureWebJobsStorage__accountName or AzureWebJobsStorage__blobServiceUri, which are not set',
    );
  }
  for (const name of ['AzureWebJobsStorage__clientId', 'AzureWebJobsStorage__managedIdentityResourceId'] as const) {
    if (settings[name] && !settings.AzureWebJobsStorage__credential)
      problems.push(`${name} needs AzureWebJobsStorage__credential=managedidentity, as the Functions host reads them`);
  }
  if (settings.AzureWebJobsStorage__clientId && settings.AzureWebJobsStorage__managedIdentityResourceId) {
    problems.push(
      'AzureWebJobsStorage__clientId and AzureWebJobsStorage__managedIdentityResourceId are both set: keep one, each names the user-assigned identity',
    );
  }
  const marker = azureMarkerOf(settings);
  if (marker) {
    // In Azure, development storage is 127.0.0.1 of the instance: nothing is there, and the host's own storage is elsewhere.
    if (connection === undefined && !identityBased) {
      problems.push(
        `No storage is set, and the app runs in Azure (${marker} is set), where it never falls back to development storage: set ${identitySettingsHint}, or AzureWebJobsStorage`,
      );
    } else if (connection?.startsWith(developmentStorage)) {
      problems.push(`AzureWebJobsStorage is ${developmentStorage}, which names no storage in Azure (${marker} is set): set ${identitySettingsHint}`);
    }
  }
  return problems;
}

/** The storage these settings name; call it once storageProblems found none. */
export function storageTargetOf(settings: StorageSettings): StorageTarget {
  const { AzureWebJobsStorage__accountName: account, AzureWebJobsStorage__blobServiceUri: uri } = settings;
  if (account === undefined && uri === undefined) return { kind: 'connectionString', connectionString: settings.AzureWebJobsStorage ?? developmentStorage };
  return {
    kind: 'identity',
    // What the host derives from an account name: the public cloud's endpoint.
    blobServiceUri: uri ?? `https://${account}.blob.core.windows.net`,
    credential: settings.AzureWebJobsStorage__credential ?? 'default',
    ...(settings.AzureWebJobsStorage__clientId && { clientId: settings.AzureWebJobsStorage__clientId }),
    ...(settings.AzureWebJobsStorage__managedIdentityResourceId && { resourceId: settings.AzureWebJobsStorage__managedIdentityResourceId }),
  };
}

/** How the start-up summary names the storage: its address and how the app signs in, never a key. */
export function describeIdentityStorage(target: Extract<StorageTarget, { kind: 'identity' }>): string {
  const signIn =
    target.credential === 'managedidentity'
      ? `the managed identity${target.clientId || target.resourceId ? ` ${target.clientId ?? target.resourceId} (user-assigned)` : ' (system-assigned)'}`
      : "DefaultAzureCredential (AzureWebJobsStorage__credential not set: a developer's sign-in, or the environment's identity)";
  return `${target.blobServiceUri} signed in with ${signIn}; no key`;
}
