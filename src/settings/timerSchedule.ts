/**
 * A timer trigger's schedule read as the Functions host reads it, and when it next fires. The
 * host's timer extension tries NCRONTAB first, with seconds: exactly six fields (second minute
 * hour day month day-of-week), each a list of `*`, a value or a range, any of them with a step
 * (`*\/5`, `1-30/10`, `5/15` = from 5 to the end); months and days of the week may be named by any
 * prefix of their English name (`Jan`, `Ju` = June, `MON-FRI`), days of the week are 0-6 from
 * Sunday, and a day must match both its day field and its day-of-week field. Nothing else: no
 * `L`, `W`, `#` or `?`. Failing that, it reads a .NET TimeSpan, the time between runs (`00:00:10`,
 * `1.00:00:00`, or `24:00:00`, which is 24 days: three numbers starting at 24 or more are
 * days:hours:minutes). The app checks its schedule settings here at start-up and the local host
 * computes its timers' runs here, so what one accepts and when it runs cannot differ between them.
 * Also refused, though the host would accept them: a schedule that never fires (`0 0 0 30 2 *`)
 * or a TimeSpan of zero or less, both a timer that would never run; and a step of 0 or a signed
 * number, which the host reads in surprising ways.
 */

/** A schedule the host accepts: the times of day and dates it fires at, or the time between runs. */
export type TimerSchedule = { kind: 'ncrontab'; fields: readonly ReadonlySet<number>[] } | { kind: 'interval'; ms: number };

interface CronField {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const cronFields: readonly CronField[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  },
  { name: 'day-of-week', min: 0, max: 6, names: ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] },
];

const digits = /^[0-9]+$/;

function valueOf(text: string, field: CronField): number {
  if (digits.test(text)) return Number(text);
  // As the host does: a name is any prefix of one, the first in order that it starts.
  const named = text === '' ? -1 : (field.names ?? []).findIndex((name) => name.toLowerCase().startsWith(text.toLowerCase()));
  if (named >= 0) return field.min + named;
  const allowed = field.names
    ? `a number from ${field.min} to ${field.max} or a name (${field.names[0]!.slice(0, 3)}...)`
    : `a number from ${field.min} to ${field.max}`;
  throw new Error(`"${text}" is not a value of the ${field.name} field: use ${allowed}`);
}

/** Adds what one item of a field's list (`*`, `5`, `1-5`, each maybe with `/step`) selects. */
function addItem(item: string, field: CronField, selected: Set<number>): void {
  let range = item;
  let step = 1;
  const slash = item.indexOf('/');
  if (slash > 0) {
    const stepText = item.slice(slash + 1);
    if (!digits.test(stepText) || Number(stepText) < 1) throw new Error(`"${item}" has a step that is not a whole number of 1 or more`);
    step = Number(stepText);
    range = item.slice(0, slash);
  }
  let first = field.min;
  let last = field.max;
  if (range !== '*') {
    const dash = range.indexOf('-');
    if (dash > 0) {
      // The host swaps a range written backwards.
      const ends = [valueOf(range.slice(0, dash), field), valueOf(range.slice(dash + 1), field)].sort((a, b) => a - b);
      [first, last] = ends as [number, number];
    } else {
      first = valueOf(range, field);
      last = step === 1 ? first : field.max;
    }
    if (first < field.min || last > field.max || first > field.max) throw new Error(`"${item}" is outside the ${field.name} values ${field.min}-${field.max}`);
  }
  for (let value = first; value <= last; value += step) selected.add(value);
}

function parseNcrontab(parts: string[]): TimerSchedule {
  const fields = parts.map((part, index) => {
    const field = cronFields[index]!;
    const selected = new Set<number>();
    // The host reads a list only when its first comma is not the field's first character.
    for (const item of part.indexOf(',') > 0 ? part.split(',') : [part]) addItem(item, field, selected);
    return selected;
  });
  return { kind: 'ncrontab', fields };
}

/** The longest TimeSpan .NET reads (TimeSpan.MaxValue, in whole days). */
const maxDays = 10_675_199;

/** A TimeSpan as .NET's TimeSpan.TryParse reads one: [-]d, [-][d.]h:m[:s[.f]], [-]d:h:m:s[.f]; undefined if not one. */
function timeSpanMs(text: string): number | undefined {
  const minus = text.startsWith('-');
  const body = minus ? text.slice(1) : text;
  let parts: [number, number, number, number];
  let fraction: string | undefined;
  const dayForm = /^(?:(\d+)\.)?(\d+):(\d+)(?::(\d+)(?:\.(\d{1,7}))?)?$/.exec(body);
  const fourNumbers = /^(\d+):(\d+):(\d+):(\d+)(?:\.(\d{1,7}))?$/.exec(body);
  if (digits.test(body)) {
    parts = [Number(body), 0, 0, 0];
  } else if (fourNumbers) {
    parts = [Number(fourNumbers[1]), Number(fourNumbers[2]), Number(fourNumbers[3]), Number(fourNumbers[4])];
    fraction = fourNumbers[5];
  } else if (dayForm) {
    const [, days, hours, minutes, seconds] = dayForm;
    fraction = dayForm[5];
    // Three numbers that cannot be hours:minutes:seconds are days:hours:minutes, as .NET reads them.
    const asDays = days === undefined && seconds !== undefined && fraction === undefined && Number(hours) > 23;
    parts = asDays ? [Number(hours), Number(minutes), Number(seconds), 0] : [Number(days ?? 0), Number(hours), Number(minutes), Number(seconds ?? 0)];
  } else {
    return undefined;
  }
  const [days, hours, minutes, seconds] = parts;
  if (days > maxDays || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const ms = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000 + Math.round(Number(`0.${fraction ?? 0}`) * 1000);
  return minus ? -ms : ms;
}

const grammar =
  'an NCRONTAB expression of six fields ({second} {minute} {hour} {day} {month} {day-of-week}), e.g. 0 */5 * * * *, or a TimeSpan between runs, e.g. 00:00:10';

/** The schedule `text` says, as the host reads it; throws an error saying what is wrong and what to write. */
export function parseTimerSchedule(text: string): TimerSchedule {
  const parts = text.trim().split(/\s+/);
  if (parts.length === 6) {
    let schedule: TimerSchedule;
    try {
      schedule = parseNcrontab(parts);
    } catch (error) {
      throw new Error(`must be ${grammar}: ${(error as Error).message}`);
    }
    if (!nextRunOf(schedule, new Date())) throw new Error('never fires: no date has that day, month and day of the week');
    return schedule;
  }
  const ms = parts.length === 1 ? timeSpanMs(parts[0]!) : undefined;
  if (ms === undefined) throw new Error(`must be ${grammar}`);
  if (ms <= 0) throw new Error('must be a TimeSpan longer than zero, e.g. 00:00:10');
  return { kind: 'interval', ms };
}

/** A date's calendar repeats every 28 years (1901-2099): a schedule with no run in 29 has none. */
const searchYears = 29;

/**
 * When `schedule` next fires after `after`, in the process's time zone (as the host uses its own,
 * UTC unless WEBSITE_TIME_ZONE says otherwise); undefined if never. A TimeSpan fires that long
 * after the last run.
 */
export function nextRunOf(schedule: TimerSchedule, after: Date): Date | undefined {
  if (schedule.kind === 'interval') return new Date(after.getTime() + schedule.ms);
  const [seconds, minutes, hours, days, months, weekdays] = schedule.fields as [
    ReadonlySet<number>,
    ReadonlySet<number>,
    ReadonlySet<number>,
    ReadonlySet<number>,
    ReadonlySet<number>,
    ReadonlySet<number>,
  ];
  const end = new Date(after.getFullYear() + searchYears, after.getMonth(), after.getDate()).getTime();
  let at = new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000);
  // Each step moves to the start of the next month, day, hour, minute or second that might match.
  const moveTo = (next: Date) => {
    // Local times repeated when clocks go back must never take the search backwards.
    at = next.getTime() > at.getTime() ? next : new Date(at.getTime() + 1000);
  };
  while (at.getTime() < end) {
    const [year, month, day, hour, minute] = [at.getFullYear(), at.getMonth(), at.getDate(), at.getHours(), at.getMinutes()];
    if (!months.has(month + 1)) moveTo(new Date(year, month + 1, 1));
    else if (!days.has(day) || !weekdays.has(at.getDay())) moveTo(new Date(year, month, day + 1));
    else if (!hours.has(hour)) moveTo(new Date(year, month, day, hour + 1));
    else if (!minutes.has(minute)) moveTo(new Date(year, month, day, hour, minute + 1));
    else if (!seconds.has(at.getSeconds())) moveTo(new Date(at.getTime() + 1000));
    else return at;
  }
  return undefined;
}

/**
 * For the schedule `text` (one the settings accepted), read once: milliseconds from `now` to its
 * next run, and its period then, from that run to the one after (a run that took longer overran).
 */
export function runTimesOf(text: string, now = new Date()): { untilNextRunMs: number; periodMs: number } {
  const schedule = parseTimerSchedule(text);
  const next = nextRunOf(schedule, now);
  const after = next && nextRunOf(schedule, next);
  return {
    untilNextRunMs: next ? next.getTime() - now.getTime() : Number.POSITIVE_INFINITY,
    periodMs: next && after ? after.getTime() - next.getTime() : Number.POSITIVE_INFINITY,
  };
}
