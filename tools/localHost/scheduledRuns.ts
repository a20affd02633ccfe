/**
 * The local host's timer clock: runs a function at each time its schedule gives, computed by the
 * parser the app checks its settings with (src/settings/timerSchedule.ts), so the local host fires when
 * the real host would and refuses what it refuses.
 */
import { nextRunOf, parseTimerSchedule, type TimerSchedule } from '../../src/settings';

/** setTimeout's longest wait; a later run is waited for in steps of this. */
const longestWaitMs = 2 ** 31 - 1;

export interface ScheduledRuns {
  stop(): void;
}

/** The schedule of the timer function `name`; throws naming it when the host would refuse it. */
export function timerScheduleOf(name: string, text: string): TimerSchedule {
  try {
    return parseTimerSchedule(text);
  } catch (error) {
    throw new Error(`Timer function "${name}" has a schedule the host refuses: it ${(error as Error).message}.`);
  }
}

/** Calls `run` at each time `schedule` fires until stopped (never twice for one time, even when late). */
export function runOnSchedule(schedule: TimerSchedule, run: () => void): ScheduledRuns {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const waitFor = (due: Date) => {
    if (stopped) return;
    const waitMs = due.getTime() - Date.now();
    if (waitMs > longestWaitMs) {
      timer = setTimeout(() => waitFor(due), longestWaitMs);
      return;
    }
    timer = setTimeout(
      () => {
        run();
        // From the later of the run's time and now: a host that fell behind runs once, not once per missed time.
        const next = nextRunOf(schedule, new Date(Math.max(due.getTime(), Date.now())));
        if (next) waitFor(next);
      },
      Math.max(0, waitMs),
    );
  };
  const first = nextRunOf(schedule, new Date());
  if (first) waitFor(first);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
