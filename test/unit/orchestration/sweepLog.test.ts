/** A poller run is logged when it did something or overran, or always at LOG_LEVEL=debug. */
import type { SweepResult } from '../../../src/orchestration/orchestrationEngine';
import { sweepLogLine } from '../../../src/orchestration/sweepLog';

const idle: SweepResult = { durationMs: 40, due: 0, polled: 0, delivered: 0, purged: 0, reconciled: 0, deferred: 0, janitorScanned: 0 };

describe('sweepLogLine', () => {
  it('leaves out a run that found nothing to do', () => {
    expect(sweepLogLine(idle, { periodMs: 10_000, level: 'information' })).toBeUndefined();
  });

  it.each<[string, Partial<SweepResult>]>([
    ['polled', { due: 1, polled: 1 }],
    ['delivered', { delivered: 2 }],
    ['purged', { purged: 3 }],
    ['reconciled', { reconciled: 1 }],
    ['ran the janitor', { janitorScanned: 500 }],
  ])('logs a run that %s', (_title, did) => {
    expect(JSON.parse(sweepLogLine({ ...idle, ...did }, { periodMs: 10_000, level: 'information' })!)).toEqual({ event: 'sweep', ...idle, ...did });
  });

  it('always logs a run that overran the period, saying so', () => {
    expect(JSON.parse(sweepLogLine({ ...idle, durationMs: 12_000 }, { periodMs: 10_000, level: 'information' })!)).toEqual({
      event: 'sweep',
      ...idle,
      durationMs: 12_000,
      overran: true,
      periodMs: 10_000,
    });
  });

  it('logs a run that left due work to the next as overrun, however short it was', () => {
    expect(JSON.parse(sweepLogLine({ ...idle, due: 40, polled: 30, deferred: 10 }, { periodMs: 10_000, level: 'information' })!)).toMatchObject({
      deferred: 10,
      overran: true,
      periodMs: 10_000,
    });
  });

  it('logs every run at debug', () => {
    expect(JSON.parse(sweepLogLine(idle, { periodMs: 10_000, level: 'debug' })!)).toEqual({ event: 'sweep', ...idle });
  });
});
