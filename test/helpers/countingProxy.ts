/**
 * An HTTP proxy on 127.0.0.1 in front of Azurite that counts the storage requests an app in
 * another place makes (the built app, or the local host's registrations), as the same
 * `METHOD path-without-account?comp=…` lines countingStorage gives for a client of its own.
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `http://127.0.0.1:port`, standing in for Azurite's origin. */
  origin: string;
  requests: string[];
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  const requests: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? '/', 'http://proxy');
    const comp = url.searchParams.get('comp');
    requests.push(`${incoming.method} ${url.pathname.split('/').slice(2).join('/')}${comp ? `?comp=${comp}` : ''}`);
    const upstream = forward({ host: target.host, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    reset: () => (requests.length = 0),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
