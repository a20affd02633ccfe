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

/**
 * `delayMs` may hold a request back before it is sent (by its `METHOD path` line): how a test
 * puts one write of a start behind another's, to reproduce a race.
 */
export function countingStorage(connectionString: string, delayMs: (line: string) => number = () => 0): CountingStorage {
  const parts = new Map(connectionString.split(';').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as const));
  const pipeline = newPipeline(new StorageSharedKeyCredential(parts.get('AccountName')!, parts.get('AccountKey')!));
  const requests: string[] = [];
  pipeline.factories.unshift({
    create: (nextPolicy) => ({
      sendRequest: (request) => {
        const url = new URL(request.url);
        const comp = url.searchParams.get('comp');
        const line = `${request.method} ${url.pathname.split('/').slice(2).join('/')}${comp ? `?comp=${comp}` : ''}`;
        requests.push(line);
        const wait = delayMs(line);
        return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)).then(() => nextPolicy.sendRequest(request)) : nextPolicy.sendRequest(request);
      },
    }),
  });
  return { service: new BlobServiceClient(parts.get('BlobEndpoint')!, pipeline), requests, reset: () => (requests.length = 0) };
}
