/**
 * A TCP proxy on 127.0.0.1 in front of a real server (Azurite), which a test can stall: while
 * stalled, connections are accepted and bytes are neither forwarded nor answered, as a storage
 * account behaves when it hangs. `stallMatching(pattern)` stalls only the requests whose head
 * matches (and what follows them on their connection): a hang that starts after some calls
 * went through. `resume()` lets everything held through again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface StallingProxy {
  /** `http://127.0.0.1:port`, standing in for the target's origin. */
  origin: string;
  stall(): void;
  /** Holds each request whose first bytes match `pattern` (e.g. `/^GET \S*\/instances\//`), and its connection's later bytes. */
  stallMatching(pattern: RegExp): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(target: { host: string; port: number }): Promise<StallingProxy> {
  let stalled = false;
  let matching: RegExp | undefined;
  /** Bytes held back from the target, by the client connection that sent them. */
  const held = new Map<Socket, { upstream: Socket; chunks: Buffer[] }>();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (stalled) socket.pause();
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      const holding = held.get(client) ?? (matching?.test(chunk.toString('latin1')) ? { upstream, chunks: [] } : undefined);
      if (!holding) return void upstream.write(chunk);
      holding.chunks.push(chunk);
      held.set(client, holding);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stall: () => {
      stalled = true;
      for (const socket of sockets) socket.pause();
    },
    stallMatching: (pattern) => {
      matching = pattern;
    },
    resume: () => {
      stalled = false;
      matching = undefined;
      for (const { upstream, chunks } of held.values()) for (const chunk of chunks) upstream.write(chunk);
      held.clear();
      for (const socket of sockets) socket.resume();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
