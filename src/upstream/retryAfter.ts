/**
 * Reads how long the upstream asked us to wait. ARM and the rest pipeline accept
 * `retry-after-ms` and `x-ms-retry-after-ms` (milliseconds) before `Retry-After`, which is
 * either whole seconds or an HTTP date (RFC 9110 section 10.2.3).
 */
export type HeaderReader = (name: string) => string | undefined;

export function parseRetryAfterMs(readHeader: HeaderReader, nowMs: number): number | undefined {
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const text = readHeader(name)?.trim();
    if (text && /^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text));
  }
  const text = readHeader('retry-after')?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const dateMs = Date.parse(text);
  if (Number.isNaN(dateMs)) return undefined;
  return Math.max(0, dateMs - nowMs);
}
