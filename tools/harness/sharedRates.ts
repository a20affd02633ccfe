/**
 * Callers' shares held across instances (src/access/sharedCallerRates.ts) on a storage client of
 * the test's or the bench's, with the app's default settings (src/settings/config.ts) unless overridden:
 * each object stands for one instance.
 */
import type { BlobServiceClient } from '@azure/storage-blob';
import { ShareBucketStore } from '../../src/access';
import { SharedCallerRates, type SharedCallerRatesOptions } from '../../src/access';

export function sharedRatesOn(
  service: BlobServiceClient,
  container: () => string,
  overrides: Partial<SharedCallerRatesOptions> & Pick<SharedCallerRatesOptions, 'now' | 'warn'>,
): SharedCallerRates {
  return new SharedCallerRates({
    store: new ShareBucketStore(() => service.getContainerClient(container())),
    maxLease: 10,
    leaseLifetimeMs: 10_000,
    timeoutMs: 200,
    attempts: 3,
    maxCallers: 10_000,
    ...overrides,
  });
}
