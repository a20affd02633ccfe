/**
 * A request's body read whole up to a limit: what the local host and the local receivers of the
 * tools (the trace viewer, the chat stand-in) hold of one request, never more.
 */
import type { IncomingMessage } from 'node:http';

/** The request body, or undefined past `limit`; read from events, cheaper per call than an async iterator. */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // As leaving a for-await loop early did: the rest of the upload is not read.
        request.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks, size)));
    request.once('error', reject);
  });
}
