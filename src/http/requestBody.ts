/**
 * The bytes of a request's body. A request without one (every GET: the programming model drops
 * a GET's body) has nothing to read, and reading it anyway cost a tenth of a GET's handler time.
 */
import type { HttpRequest } from '@azure/functions';

export async function bodyBytesOf(request: Pick<HttpRequest, 'body' | 'arrayBuffer'>): Promise<Uint8Array> {
  return request.body ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array(0);
}
