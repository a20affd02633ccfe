/** The retry rules as tables (STYLE.md: rules are pure functions, tested with tables). */
import { maxRetryAfterMs, parseRetryAfterMs } from '../../../src/upstream/retryAfter';
import { backoffMs, retryDelayMs, type AttemptOutcome } from '../../../src/upstream/retryStrategy';

const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000 };
const now = Date.parse('2026-01-01T00:00:00Z');
const headers = (values: Record<string, string>) => (name: string) => values[name];
const response = (status: number, values: Record<string, string> = {}): AttemptOutcome => ({ kind: 'response', status, readHeader: headers(values) });
const error = (code: string): AttemptOutcome => ({ kind: 'error', code });

describe('parseRetryAfterMs', () => {
  it.each<[Record<string, string>, number | undefined]>([
    [{}, undefined],
    [{ 'retry-after': '7' }, 7000],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'x-ms-retry-after-ms': '1200' }, 1200],
    // Only whole seconds or an HTTP date: Date.parse would read these as dates long past (a wait of 0).
    [{ 'retry-after': '-5' }, undefined],
    [{ 'retry-after': '1e3' }, undefined],
    [{ 'retry-after': '2025' }, 2_025_000],
    [{ 'retry-after': '12 December 2099' }, undefined],
    [{ 'retry-after-ms': '-250' }, undefined],
    // The two obsolete HTTP-date forms are still read.
    [{ 'retry-after': 'Thursday, 01-Jan-26 00:00:10 GMT' }, 10_000],
    [{ 'retry-after': 'Thu Jan  1 00:00:20 2026' }, 20_000],
    // No wait is longer than a day, so a time built on it is one a date can hold.
    [{ 'retry-after': '99999999999999' }, maxRetryAfterMs],
    [{ 'retry-after-ms': '9999999999999999999999' }, maxRetryAfterMs],
    [{ 'retry-after': 'Fri, 01 Jan 9999 00:00:00 GMT' }, maxRetryAfterMs],
  ])('%j gives %s', (values, expected) => {
    expect(parseRetryAfterMs(headers(values), now)).toBe(expected);
  });
});

describe('retryDelayMs', () => {
  const fixedRandom = () => 0.5;
  it.each<[string, string, AttemptOutcome, number, number | undefined]>([
    ['GET 200 is final', 'GET', response(200), 0, undefined],
    ['GET 404 is final', 'GET', response(404), 0, undefined],
    ['GET 503 backs off', 'GET', response(503), 0, 75],
    ['GET 429 waits as asked', 'GET', response(429, { 'retry-after': '2' }), 0, 2000],
    ['GET 429 with an invalid Retry-After backs off', 'GET', response(429, { 'retry-after': '-5' }), 0, 75],
    ['GET 429 asking for no wait still waits a little', 'GET', response(429, { 'retry-after': '0' }), 0, 100],
    ['GET 503 with a date long past still waits a little', 'GET', response(503, { 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }), 0, 100],
    ['PUT 500 backs off, doubling', 'PUT', response(500), 1, 150],
    ['POST 503 may have done its work: final', 'POST', response(503), 0, undefined],
    ['POST 500 is final', 'POST', response(500), 0, undefined],
    ['POST 429 was refused before any work: repeated', 'POST', response(429, { 'retry-after-ms': '300' }), 0, 300],
    ['POST reset after sending: final', 'POST', error('ECONNRESET'), 0, undefined],
    ['POST refused connection never left: repeated', 'POST', error('ECONNREFUSED'), 0, 75],
    ['GET reset: repeated', 'GET', error('ECONNRESET'), 0, 75],
    ['GET unknown error: final', 'GET', error('EWHATEVER'), 0, undefined],
    ['retries exhausted', 'GET', response(503), 3, undefined],
  ])('%s', (_title, method, outcome, attempt, expected) => {
    expect(retryDelayMs(method, outcome, attempt, policy, now, fixedRandom)).toBe(expected);
  });

  it('caps the back-off and keeps it within [ceiling/2, ceiling]', () => {
    for (const random of [0, 0.3, 0.99]) {
      const delay = backoffMs(10, policy, () => random);
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1000);
    }
  });
});
