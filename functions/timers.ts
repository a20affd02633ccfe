/**
 * The app's two timers: the orchestration poller (ORCHESTRATION_POLL_SCHEDULE) and the
 * certificate refresh (CERT_REFRESH_SCHEDULE). Registration and glue only: the work is in
 * src/orchestration and src/certificates.
 */
import { app, type InvocationContext } from '@azure/functions';
import { getServices } from '../src/app';
import { sweepLogLine } from '../src/orchestration';
import { getConfig } from '../src/settings';
import { runTimesOf } from '../src/settings';
import { tokenFailureMessage } from '../src/upstream';

/**
 * The poller's token, or undefined when none can be had: the run then goes on as in passthrough
 * mode (no polls; deadlines, notifications and retention still apply), and the log says why and
 * which settings to look at, instead of the bare failure of the timer.
 */
async function pollerToken(services: ReturnType<typeof getServices>, context: InvocationContext): Promise<string | undefined> {
  try {
    return await services.tokens.getToken({ upstream: 'management' });
  } catch (error) {
    context.error(`The orchestration poller made no polls in this run. ${tokenFailureMessage(error, 'management', services.config)}`);
    return undefined;
  }
}

app.timer('orchestrationPoller', {
  schedule: getConfig().ORCHESTRATION_POLL_SCHEDULE,
  handler: async (_timer, context) => {
    const services = getServices();
    // Passthrough mode holds no token: orchestrations advance when their callers read them, and
    // the sweep still applies deadlines, interrupted starts, notifications and retention.
    const token = services.tokens.mode === 'passthrough' ? undefined : await pollerToken(services, context);
    // Polls due within the lookahead are made in this run (see sweep). Waiting is billed
    // execution time, so it is a setting, and a margin keeps the run shorter than the period.
    const { untilNextRunMs, periodMs } = runTimesOf(services.config.ORCHESTRATION_POLL_SCHEDULE);
    const lookaheadMs = Math.max(0, Math.min(untilNextRunMs - 300, services.config.LRO_POLL_LOOKAHEAD_SECONDS * 1000));
    // A backlog is worked off past the next run (which waits for this one) for at most
    // ORCHESTRATION_RUN_MAX_SECONDS; what is left then goes to the next run, in due order.
    const result = await services.orchestrations.sweep(token, lookaheadMs, services.config.ORCHESTRATION_RUN_MAX_SECONDS * 1000);
    const line = sweepLogLine(result, { periodMs, level: services.config.LOG_LEVEL });
    if (line) context.log(line);
  },
});

app.timer('certificateRefresher', {
  schedule: getConfig().CERT_REFRESH_SCHEDULE,
  handler: async (_timer, context) => {
    const services = getServices();
    const environments = services.config.CERT_ENVIRONMENTS;
    if (environments.length === 0) return;
    const token = await services.backgroundToken('lifecycle');
    if (!token) {
      context.warn('Certificate refresh skipped: passthrough auth and no LIFECYCLE_ user credential configured for the timer.');
      return;
    }
    const results = await services.certificates.refresher.refreshAll(environments, { force: false, trigger: 'timer', token });
    const counts = results.reduce<Record<string, number>>((tally, result) => ({ ...tally, [result.outcome]: (tally[result.outcome] ?? 0) + 1 }), {});
    context.log(JSON.stringify({ event: 'certificate-sweep', environments: environments.length, ...counts }));
  },
});
