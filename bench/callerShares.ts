/**
 * The caller-shares section: what holding a caller's share across instances (leases from a
 * bucket in storage, src/access/sharedCallerRates.ts) adds to a call, against the per-instance
 * limiter it replaced (src/access/callerRateLimiter.ts), for a caller calling steadily at its
 * share: storage requests per call (counted through the storage client, target 0.25 at most)
 * and the time a call waits on its draw (target 1 ms at most, median). The limiters run in this
 * process against Azurite in a process of its own, with the app's default settings.
 */
import { randomUUID } from 'node:crypto';
import { CallerRateLimiter } from '../src/access';
import type { SharedCallerRates } from '../src/access';
import { countingStorage, type CountingStorage } from '../tools/harness/countingStorage';
import { sharedRatesOn } from '../tools/harness/sharedRates';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { median, percentile, results, round, rows } from './benchKit';

function sharedRates(storage: CountingStorage, container: string, now: () => number): SharedCallerRates {
  return sharedRatesOn(storage.service, () => container, { now, warn: (line) => console.warn(line) });
}

/**
 * Storage requests per call of `calls` calls at exactly the share, one every 60/perMinute
 * seconds, spread over `instances` instances in turn, on a clock moved by the bench (what a
 * lease costs depends on the calls' times, not on how long storage takes); each lease taken
 * ahead is let finish before the next call, as it does long before a call a second later.
 */
async function requestsPerCall(storage: CountingStorage, perMinute: number, calls: number, instances: number): Promise<number> {
  let clock = Date.now();
  const container = `bench-shares-${randomUUID().slice(0, 8)}`;
  await storage.service.getContainerClient(container).create();
  const limiters = Array.from({ length: instances }, () => sharedRates(storage, container, () => clock));
  storage.reset();
  for (let call = 0; call < calls; call += 1) {
    const limiter = limiters[call % instances]!;
    if (!(await limiter.take('key:steady', 'reads', perMinute)).allowed) throw new Error(`A call at the share was refused (call ${call}).`);
    await limiter.settled();
    clock += 60_000 / perMinute;
  }
  return storage.requests.length / calls;
}

/** The time each call waits on its draw, the per-instance limiter's and the shared one's interleaved, calls paced at the share in real time. */
async function drawTimes(storage: CountingStorage, perMinute: number, calls: number) {
  const container = `bench-shares-${randomUUID().slice(0, 8)}`;
  await storage.service.getContainerClient(container).create();
  const shared = sharedRates(storage, container, Date.now);
  const perInstance = new CallerRateLimiter();
  const baselineMs: number[] = [];
  const sharedMs: number[] = [];
  const time = async (draw: () => Promise<{ allowed: boolean }> | { allowed: boolean }) => {
    const started = process.hrtime.bigint();
    const drawn = await draw();
    if (!drawn.allowed) throw new Error('A call at the share was refused.');
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  storage.reset();
  for (let call = 0; call < calls; call += 1) {
    // Awaited as takeCallerRate awaits either.
    baselineMs.push(await time(async () => perInstance.take('key:steady', 'reads', perMinute, Date.now())));
    sharedMs.push(await time(() => shared.take('key:steady', 'reads', perMinute)));
    await new Promise((resolve) => setTimeout(resolve, 60_000 / perMinute));
  }
  await shared.settled();
  return { baselineMs, sharedMs, requestsPerCall: storage.requests.length / calls };
}

const signed = (value: number) => (value < 0 ? `${value}` : `+${value}`);

export async function callerShares(azurite: RunningAzurite): Promise<void> {
  const storage = countingStorage(azurite.connectionString);
  const steady = { perMinute: 60, calls: 240 };
  const oneInstance = await requestsPerCall(storage, steady.perMinute, steady.calls, 1);
  const twoInstances = await requestsPerCall(storage, steady.perMinute, steady.calls, 2);
  const paced = { perMinute: 600, calls: 200 };
  const times = await drawTimes(storage, paced.perMinute, paced.calls);
  const figures = {
    requestsPerCallOneInstance: round(oneInstance, 3),
    requestsPerCallTwoInstances: round(twoInstances, 3),
    requestsPerCallPaced: round(times.requestsPerCall, 3),
    perInstanceMedianMs: round(median(times.baselineMs), 4),
    perInstanceP99Ms: round(percentile(times.baselineMs, 99), 4),
    sharedMedianMs: round(median(times.sharedMs), 4),
    sharedP99Ms: round(percentile(times.sharedMs, 99), 4),
  };
  const addedMedianMs = round(figures.sharedMedianMs - figures.perInstanceMedianMs, 4);
  rows.push(
    {
      section: 'caller shares',
      metric: `storage requests per call, ${steady.calls} calls at the share (${steady.perMinute} a minute), one instance`,
      baseline: '0 per-instance, 0.25 target',
      app: `${figures.requestsPerCallOneInstance}`,
      difference: `+${figures.requestsPerCallOneInstance}`,
    },
    {
      section: 'caller shares',
      metric: `the same, the calls to two instances in turn`,
      baseline: '0 per-instance',
      app: `${figures.requestsPerCallTwoInstances}`,
      difference: `+${figures.requestsPerCallTwoInstances}`,
    },
    {
      section: 'caller shares',
      metric: `the same, ${paced.calls} calls paced at ${paced.perMinute} a minute in real time, one instance`,
      baseline: '0 per-instance',
      app: `${figures.requestsPerCallPaced}`,
      difference: `+${figures.requestsPerCallPaced}`,
    },
    {
      section: 'caller shares',
      metric: `a call's wait on its draw, median / p99 (those ${paced.calls} calls)`,
      baseline: `${figures.perInstanceMedianMs} / ${figures.perInstanceP99Ms} ms per-instance`,
      app: `${figures.sharedMedianMs} / ${figures.sharedP99Ms} ms`,
      difference: `${signed(addedMedianMs)} / ${signed(round(figures.sharedP99Ms - figures.perInstanceP99Ms, 4))} ms (1 ms target)`,
    },
  );
  results.callerShares = { steady, paced, ...figures, addedMedianMs };
}
