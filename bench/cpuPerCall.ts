/**
 * CPU per call, measured in rounds of calls in this process (the added-latency and telemetry
 * sections), each round's garbage collected within its own count.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full collection now (V8's `gc`, exposed to this process once, when first asked for). */
function collectGarbage(): void {
  collector ??= (() => {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  })();
  collector();
}
let collector: (() => void) | undefined;

/** CPU microseconds `work` takes, its garbage collected within the count (what the next work would otherwise pay) unless told not to. */
async function cpuMicrosOf(work: () => Promise<void>, { collect = true } = {}): Promise<number> {
  const before = process.cpuUsage();
  await work();
  if (collect) collectGarbage();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

export const callsARound = 2000;

/**
 * A round of calls: CPU per call. Each round collects its own garbage before its CPU is read:
 * otherwise what one round left is collected in whichever round follows (a direct round, which
 * is subtracted), and figures move by a third from run to run with where collections fall.
 */
export async function cpuPerCallOfRound(run: (index: number) => Promise<void>): Promise<number> {
  const micros = await cpuMicrosOf(async () => {
    for (let index = 0; index < callsARound; index += 1) await run(index);
  });
  return micros / callsARound;
}

/**
 * A round of calls made in batches: `between` runs after each batch outside the calls' count
 * (its CPU is returned apart). The calls' garbage is collected within their count at the end,
 * as in cpuPerCallOfRound, then the last `between`'s within its own; what an earlier `between`
 * left is collected during the calls that follow it, so the calls' figure errs high, not low.
 */
export async function cpuPerCallInBatches(
  run: (index: number) => Promise<void>,
  batch: number,
  between: () => Promise<void>,
): Promise<{ perCall: number; betweenPerCall: number }> {
  let calls = 0;
  let betweenMicros = 0;
  for (let start = 0; start < callsARound; start += batch) {
    const last = start + batch >= callsARound;
    calls += await cpuMicrosOf(
      async () => {
        for (let index = start; index < Math.min(start + batch, callsARound); index += 1) await run(index);
      },
      { collect: last },
    );
    betweenMicros += await cpuMicrosOf(between, { collect: last });
  }
  return { perCall: calls / callsARound, betweenPerCall: betweenMicros / callsARound };
}
