/**
 * The live heap of another Node process after a full collection, read through its inspector
 * (started with `--inspect=127.0.0.1:0`). Resident memory says when V8 chose to collect, and
 * Node 24's collector lets the heap grow much further before it does than Node 20's: only the
 * heap left after a forced collection says what the process keeps, the same on every version.
 */
import { WebSocket } from 'undici';

export interface HeapProbe {
  /** Bytes of heap in use after two full collections. */
  liveHeapBytes(): Promise<number>;
  close(): void;
}

/** Node's opening line on stderr, "Debugger listening on ws://127.0.0.1:PORT/ID", in `lines`. */
export async function connectHeapProbe(lines: readonly string[], timeoutMs = 10_000): Promise<HeapProbe> {
  const url = lines.map((line) => /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(line)?.[1]).find(Boolean);
  if (!url) throw new Error('The process has no inspector: start it with NODE_OPTIONS=--inspect=127.0.0.1:0.');
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`The inspector at ${url} did not answer.`)), { once: true });
  });
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  let nextId = 1;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`The inspector did not answer ${method} in ${timeoutMs} ms.`)), timeoutMs);
      pending.set(id, (result) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(result);
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async liveHeapBytes() {
      // Twice: objects with finalizers or weak references are freed only by the second.
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const usage = (await call('Runtime.getHeapUsage')) as { usedSize: number };
      return usage.usedSize;
    },
    close: () => socket.close(),
  };
}
