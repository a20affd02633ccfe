/**
 * The local host reads a timer's schedule with the parser the app checks its settings with
 * (src/settings/timerSchedule.ts): a schedule the real host would put in error stops the start, naming the
 * function, and one it accepts is served.
 */
import { registerFunction } from '../../../tools/localHost/coreApi';
import { startLocalHost } from '../../../tools/localHost/localHost';

const timer = (name: string, schedule: string) =>
  registerFunction({ name, bindings: { tick: { type: 'timerTrigger', direction: 'in', schedule } } }, () => undefined);

it.each([
  [
    'L, a day NCRONTAB lacks',
    '0 0 12 L * *',
    /Timer function "lastDay" has a schedule the host refuses: it must be an NCRONTAB expression .*"L" is not a value of the day field/,
  ],
  ['five fields', '0 */5 * * *', /Timer function "lastDay" has a schedule the host refuses: it must be an NCRONTAB expression of six fields/],
  ['a schedule that never fires', '0 0 0 31 4 *', /Timer function "lastDay" has a schedule the host refuses: it never fires/],
])('refuses to start with a timer on %s', async (_name, schedule, problem) => {
  const registration = timer('lastDay', schedule);
  try {
    await expect(startLocalHost({ routePrefix: 'api', runTimers: false })).rejects.toThrow(problem);
  } finally {
    registration.dispose();
  }
});

it('starts with timers on NCRONTAB and TimeSpan schedules', async () => {
  const registrations = [timer('everyFiveMinutes', '0 */5 * * * *'), timer('everyTenSeconds', '00:00:10')];
  try {
    const host = await startLocalHost({ routePrefix: 'api' });
    expect(host.timers).toEqual(['everyFiveMinutes', 'everyTenSeconds']);
    await host.close();
  } finally {
    for (const registration of registrations) registration.dispose();
  }
});
