/**
 * A blob service client that counts the storage requests made through it: how the tests
 * check what a step costs in round trips (deterministic, unlike a timing). The count is taken
 * outside the SDK's retry policy, so it counts the calls the app makes, not their retries.
 */
import { BlobServiceClient, newPipeline, StorageSharedKeyCredential } from '@azure/storage-blob';

export interface CountingStorage {
  service: BlobServiceClient;
  /** Requests made since the last reset, as `METHOD path-without-account?comp=…` lines. */
  requests: string[];
  reset(): void;
}

export function countingStorage(connectionString: string): CountingStorage {
  const parts = new Map(connectionString.split(';').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as const));
  const pipeline = newPipeline(new StorageSharedKeyCredential(parts.get('AccountName')!, parts.get('AccountKey')!));
  const requests: string[] = [];
  pipeline.factories.unshift({
    create: (nextPolicy) => ({
      sendRequest: (request) => {
        const url = new URL(request.url);
        const comp = url.searchParams.get('comp');
        requests.push(`${request.method} ${url.pathname.split('/').slice(2).join('/')}${comp ? `?comp=${comp}` : ''}`);
        return nextPolicy.sendRequest(request);
      },
    }),
  });
  return { service: new BlobServiceClient(parts.get('BlobEndpoint')!, pipeline), requests, reset: () => (requests.length = 0) };
}
