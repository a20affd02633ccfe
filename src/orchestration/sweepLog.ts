/**
 * Whether a poller run leaves a line in the log. A run every 10 s that found nothing to do would
 * bury the call log, so a run is logged when it did something, when it overran the time until
 * the schedule's next run (a backlog, or a slow dependency: its duration passed the period, or
 * it left due work to the next run), or always at `LOG_LEVEL=debug`.
 */
import type { SweepResult } from './engineSettings';

export type LogLevel = 'debug' | 'information';

export function sweepLogLine(result: SweepResult, options: { periodMs: number; level: LogLevel }): string | undefined {
  const overran = result.durationMs >= options.periodMs || result.deferred > 0;
  const didSomething = result.due + result.polled + result.delivered + result.purged + result.reconciled + result.janitorScanned > 0;
  if (!overran && !didSomething && options.level !== 'debug') return undefined;
  return JSON.stringify({ event: 'sweep', ...result, ...(overran && { overran: true, periodMs: options.periodMs }) });
}
