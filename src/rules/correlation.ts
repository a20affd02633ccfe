/**
 * The correlation id of a call: the caller's own (`x-ms-client-request-id`, as ARM clients
 * send it, or `x-correlation-id`) when it is a plausible id, else a new one. It is forwarded
 * upstream and returned to the caller in `x-correlation-id`.
 */
import { randomUUID } from 'node:crypto';

export type HeaderGetter = { get(name: string): string | null };

export const correlationHeader = 'x-correlation-id';

export function correlationIdOf(headers: HeaderGetter): string {
  for (const name of ['x-ms-client-request-id', correlationHeader]) {
    const value = headers.get(name)?.trim();
    // Only ids of a safe shape are echoed, so a header cannot inject text into logs or answers.
    if (value && /^[A-Za-z0-9._:-]{1,128}$/.test(value)) return value;
  }
  return randomUUID();
}
