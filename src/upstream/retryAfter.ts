/**
 * Reads how long the upstream asked us to wait. ARM and the rest pipeline accept
 * `retry-after-ms` and `x-ms-retry-after-ms` (milliseconds) before `Retry-After`, which is
 * either whole seconds or an HTTP date (RFC 9110 section 10.2.3).
 *
 * Anything else is no answer at all (the caller then backs off): `Date.parse` would read
 * `-5` as a date two thousand years ago and so a wait of nothing, which let a hostile upstream
 * drive a tight retry loop. And no wait read here is longer than `maxRetryAfterMs`, so a time
 * computed from it is always one a date can hold.
 */
export type HeaderReader = (name: string) => string | undefined;

/** The longest wait honoured: a day. */
export const maxRetryAfterMs = 24 * 3600_000;

const day = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const month = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const time = '\\d{2}:\\d{2}:\\d{2}';
/** IMF-fixdate, and the two obsolete forms RFC 9110 section 5.6.7 still asks recipients to read. */
const httpDatePatterns = [
  new RegExp(`^${day}, \\d{2} ${month} \\d{4} ${time} GMT$`),
  new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${month}-\\d{2} ${time} GMT$`),
  new RegExp(`^${day} ${month} [ \\d]\\d ${time} \\d{4}$`),
];

export function parseRetryAfterMs(readHeader: HeaderReader, nowMs: number): number | undefined {
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const text = readHeader(name)?.trim();
    if (text && /^\d+(\.\d+)?$/.test(text)) return Math.min(maxRetryAfterMs, Math.ceil(Number(text)));
  }
  const text = readHeader('retry-after')?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(maxRetryAfterMs, Number(text) * 1000);
  if (!httpDatePatterns.some((pattern) => pattern.test(text))) return undefined;
  const dateMs = Date.parse(text);
  if (Number.isNaN(dateMs)) return undefined;
  return Math.min(maxRetryAfterMs, Math.max(0, dateMs - nowMs));
}
