/** Which environments are running out of certificate, and which of them are an alert. */
import type { AttemptRecord, CertificateMetadata } from '../../../src/certificates/certificateStore';
import { environmentAtRisk } from '../../../src/certificates/certificateWatch';

const day = 24 * 3600_000;
const now = Date.parse('2026-06-01T00:00:00Z');
const policy = { renewBeforeMs: 14 * day, alertBeforeMs: 7 * day };
const environment = { projectId: 7, environmentId: '11111111-2222-3333-4444-555555555555' };
const expiringIn = (ms: number) => ({ expiresAt: new Date(now + ms).toISOString() }) as CertificateMetadata;
const attempt = (outcome: AttemptRecord['outcome'], code?: string): AttemptRecord => ({
  at: new Date(now).toISOString(),
  trigger: 'timer',
  outcome,
  ...(code && { error: { code, message: 'm' } }),
});

describe('environmentAtRisk', () => {
  it.each<[string, CertificateMetadata | undefined, AttemptRecord | undefined, { daysLeft: number | null; lastErrorCode: string; alert: boolean } | undefined]>(
    [
      ['fresh, last attempt failed', expiringIn(30 * day), attempt('failed', 'PfxPasswordInvalid'), undefined],
      ['within the renewal window, last attempt downloaded', expiringIn(10 * day), attempt('downloaded'), undefined],
      ['within the renewal window, never attempted', expiringIn(10 * day), undefined, undefined],
      ['missing, never attempted', undefined, undefined, undefined],
      [
        'within the renewal window, last attempt failed',
        expiringIn(10 * day + 3600_000),
        attempt('failed', 'ThumbprintMismatch'),
        { daysLeft: 10, lastErrorCode: 'ThumbprintMismatch', alert: false },
      ],
      ['exactly at the renewal window', expiringIn(14 * day), attempt('failed', 'CerMismatch'), { daysLeft: 14, lastErrorCode: 'CerMismatch', alert: false }],
      [
        'within the alert window',
        expiringIn(7 * day),
        attempt('failed', 'CertificateExpired'),
        { daysLeft: 7, lastErrorCode: 'CertificateExpired', alert: true },
      ],
      [
        'within the renewal window, held back by the rate limit',
        expiringIn(3 * day),
        attempt('rate-limited'),
        { daysLeft: 3, lastErrorCode: 'RateLimited', alert: true },
      ],
      ['already expired', expiringIn(-36 * 3600_000), attempt('failed', 'DownloadFailed'), { daysLeft: -2, lastErrorCode: 'DownloadFailed', alert: true }],
      ['missing, last attempt failed', undefined, attempt('failed', 'PfxWithoutKey'), { daysLeft: null, lastErrorCode: 'PfxWithoutKey', alert: true }],
    ],
  )('%s', (_title, current, lastAttempt, expected) => {
    const found = environmentAtRisk(environment, { current, lastAttempt }, now, policy);
    expect(found).toEqual(expected && { ...environment, expiresAt: current?.expiresAt ?? null, ...expected });
  });
});
