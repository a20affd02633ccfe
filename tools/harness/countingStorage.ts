/**
 * Counting storage requests, the way the tests check what a step costs in round trips
 * (deterministic, unlike a timing): a blob service client that counts the requests made
 * through it, and a proxy that counts what passes through it to the service. The client's
 * count is taken outside the SDK's retry policy, so it counts the calls the app makes, not
 * their retries.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlobServiceClient, newPipeline, StorageSharedKeyCredential } from '@azure/storage-blob';

export interface CountingStorage {
  service: BlobServiceClient;
  /** Requests made since the last reset, as `METHOD path-without-account?comp=…` lines. */
  requests: string[];
  reset(): void;
}

/**
 * How a request stalls, as it does when a storage account hangs: `request`, never sent; `answer`,
 * sent (the service acts on it) but its answer never arrives. Either lasts until the caller's
 * budget aborts the call.
 */
export type Stall = 'request' | 'answer';

/** Fails with the SDK's abort error once `signal` aborts. */
function abortedBy(signal: { aborted: boolean; addEventListener(type: 'abort', listener: () => void): void } | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' }));
    if (signal?.aborted) fail();
    else signal?.addEventListener('abort', fail);
  });
}

/**
 * `delayMs` may hold a request back before it is sent (by its `METHOD path` line), for some
 * milliseconds or until a promise settles: how a test puts one write behind another's, to
 * reproduce a race (a promise the test settles reproduces it with nothing timed). `stall` may
 * stall one until the call is aborted (see Stall): a transient storage failure with nothing timed.
 */
export function countingStorage(
  connectionString: string,
  delayMs: (line: string) => number | PromiseLike<unknown> = () => 0,
  stall: (line: string) => Stall | undefined = () => undefined,
): CountingStorage {
  const parts = new Map(
    connectionString
      .split(';')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as const),
  );
  const pipeline = newPipeline(new StorageSharedKeyCredential(parts.get('AccountName')!, parts.get('AccountKey')!));
  const requests: string[] = [];
  pipeline.factories.unshift({
    create: (nextPolicy) => ({
      sendRequest: (request) => {
        const url = new URL(request.url);
        const comp = url.searchParams.get('comp');
        const line = `${request.method} ${url.pathname.split('/').slice(2).join('/')}${comp ? `?comp=${comp}` : ''}`;
        requests.push(line);
        const stalled = stall(line);
        if (stalled === 'request') return abortedBy(request.abortSignal);
        if (stalled === 'answer') {
          // Sent whole whatever the caller's budget does meanwhile (its signal is held back): the service has acted.
          const signal = request.abortSignal;
          request.abortSignal = undefined;
          return nextPolicy.sendRequest(request).then(() => abortedBy(signal));
        }
        const wait = delayMs(line);
        if (typeof wait !== 'number') return Promise.resolve(wait).then(() => nextPolicy.sendRequest(request));
        return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)).then(() => nextPolicy.sendRequest(request)) : nextPolicy.sendRequest(request);
      },
    }),
  });
  return { service: new BlobServiceClient(parts.get('BlobEndpoint')!, pipeline), requests, reset: () => (requests.length = 0) };
}

export interface CountingStorageProxy {
  /** `http://127.0.0.1:port`, standing in for the storage service's origin. */
  origin: string;
  /** Requests received since the last reset, as `METHOD path-without-account?comp=…` lines. */
  requests: string[];
  /** Requests answered since the last reset: their line and answered body bytes. */
  answered: { line: string; bytes: number }[];
  reset(): void;
  close(): Promise<void>;
}

/**
 * An HTTP proxy on 127.0.0.1 in front of the storage service, counting what passes through:
 * for an app that builds its own storage clients (the in-process gateway), where a counting
 * pipeline cannot be slipped in. Shared-key signatures do not cover the host, so they hold.
 */
export async function startCountingStorageProxy(target: { host: string; port: number }): Promise<CountingStorageProxy> {
  const requests: string[] = [];
  const answered: { line: string; bytes: number }[] = [];
  const server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? '/', 'http://storage');
    const comp = url.searchParams.get('comp');
    const line = `${incoming.method} ${url.pathname.split('/').slice(2).join('/')}${comp ? `?comp=${comp}` : ''}`;
    requests.push(line);
    const forwarded = httpRequest(
      { host: target.host, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        let bytes = 0;
        answer.on('data', (chunk: Buffer) => (bytes += chunk.length));
        answer.on('end', () => answered.push({ line, bytes }));
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answered,
    reset: () => {
      requests.length = 0;
      answered.length = 0;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
