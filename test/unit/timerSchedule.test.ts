/**
 * src/settings/timerSchedule.ts: the schedules the Functions host accepts for a timer (NCRONTAB with
 * seconds, or a TimeSpan), when each next fires, and what is refused with the reason. Times are
 * local (the process's time zone), as the schedule reads them.
 */
import { nextRunOf, parseTimerSchedule } from '../../src/settings/timerSchedule';

/** 2026-01-01 is a Thursday. */
const at = (month: number, day: number, hour = 0, minute = 0, second = 0, year = 2026) => new Date(year, month - 1, day, hour, minute, second);

describe('accepted, and when each next fires', () => {
  it.each<[string, string, Date, Date]>([
    ['every 10 seconds', '*/10 * * * * *', at(1, 1, 12, 0, 3), at(1, 1, 12, 0, 10)],
    ['every 5 minutes', '0 */5 * * * *', at(1, 1, 12, 4, 59), at(1, 1, 12, 5)],
    ['every 6 hours', '0 0 */6 * * *', at(1, 1, 6), at(1, 1, 12)],
    ['weekdays at 9:30, by day names', '0 30 9 * * MON-FRI', at(1, 2, 10), at(1, 5, 9, 30)],
    ['a list of month names', '0 0 0 1 Jan,Jul *', at(1, 1, 0, 0, 1), at(7, 1)],
    ['a full day name', '0 0 0 * * Sunday', at(1, 1), at(1, 4)],
    ['any prefix of a name: Ju is June', '0 0 12 1 Ju *', at(1, 1), at(6, 1, 12)],
    ['a value with a step runs from it to the end', '5/15 * * * * *', at(1, 1, 0, 0, 51), at(1, 1, 0, 1, 5)],
    ['a range with a step', '0 1-30/10 * * * *', at(1, 1, 0, 12), at(1, 1, 0, 21)],
    ['a range written backwards, swapped (FRI-MON is MON-FRI)', '0 0 0 * * 5-1', at(1, 3, 12), at(1, 5)],
    ['day and day of week must both match', '0 0 0 1 * MON', at(1, 1), at(6, 1)],
    ['29 February: leap years only', '0 0 0 29 2 *', at(3, 1), at(2, 29, 0, 0, 0, 2028)],
    ['blanks around and between fields', '  0  0 * * * * ', at(1, 1, 0, 30), at(1, 1, 1)],
    ['a TimeSpan hh:mm:ss', '00:00:10', at(1, 1), at(1, 1, 0, 0, 10)],
    ['a TimeSpan of hours and minutes', '01:30', at(1, 1), at(1, 1, 1, 30)],
    ['a TimeSpan with days d.hh:mm:ss', '1.00:00:00', at(1, 1), at(1, 2)],
    ['three numbers from 24 up are days:hours:minutes', '24:00:00', at(1, 1), at(1, 25)],
    ['a TimeSpan of four numbers d:hh:mm:ss', '2:03:04:05', at(1, 1), at(1, 3, 3, 4, 5)],
    ['a number alone is days', '10', at(1, 1), at(1, 11)],
  ])('%s: %j', (_name, text, after, next) => {
    expect(nextRunOf(parseTimerSchedule(text), after)).toEqual(next);
  });

  it('reads a fraction of a second in a TimeSpan', () => {
    expect(parseTimerSchedule('00:00:00.5')).toEqual({ kind: 'interval', ms: 500 });
  });
});

describe('refused, saying why', () => {
  it.each<[string, string, RegExp]>([
    ['L (last day): not NCRONTAB', '0 0 12 L * *', /"L" is not a value of the day field: use a number from 1 to 31/],
    ['? (no specific value)', '0 0 12 ? * *', /"\?" is not a value of the day field/],
    ['# (nth weekday)', '0 0 12 * * MON#2', /"MON#2" is not a value of the day-of-week field/],
    ['W (nearest weekday)', '0 0 12 15W * *', /"15W" is not a value of the day field/],
    ['five fields (no seconds)', '0 * * * *', /must be an NCRONTAB expression of six fields/],
    ['seven fields (a year)', '0 0 0 * * * 2026', /must be an NCRONTAB expression of six fields/],
    ['day of week 7 (NCRONTAB counts 0-6 from Sunday)', '0 0 0 * * 7', /"7" is outside the day-of-week values 0-6/],
    ['second 60', '60 * * * * *', /"60" is outside the second values 0-59/],
    ['day 0', '0 0 0 0 * *', /"0" is outside the day values 1-31/],
    ['a range past the end', '0 0 20-24 * * *', /"20-24" is outside the hour values 0-23/],
    ['a step of 0', '*/0 * * * * *', /"\*\/0" has a step that is not a whole number of 1 or more/],
    ['a signed step', '*/-5 * * * * *', /has a step that is not a whole number/],
    ['a name where the field has none', '0 0 noon * * *', /"noon" is not a value of the hour field: use a number from 0 to 23$/],
    ['an unknown name', '0 0 0 * Jux *', /"Jux" is not a value of the month field/],
    ['an empty list item', '0 5, * * * *', /"" is not a value of the minute field/],
    ['a list starting with a comma', '0 ,5 * * * *', /",5" is not a value of the minute field/],
    ['a range of three', '0 1-2-3 * * * *', /"2-3" is not a value of the minute field/],
    ['a schedule that never fires', '0 0 0 30 2 *', /never fires/],
    ['a TimeSpan of zero', '00:00:00', /must be a TimeSpan longer than zero/],
    ['a negative TimeSpan', '-00:00:10', /must be a TimeSpan longer than zero/],
    ['minutes past 59', '00:60:00', /or a TimeSpan between runs, e.g. 00:00:10$/],
    ['a fraction of a day', '1.5', /or a TimeSpan between runs/],
    ['words', 'every 5 minutes', /must be an NCRONTAB expression/],
    ['nothing', '', /must be an NCRONTAB expression/],
  ])('%s: %j', (_name, text, problem) => {
    expect(() => parseTimerSchedule(text)).toThrow(problem);
  });
});
