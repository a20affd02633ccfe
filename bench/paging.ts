/** The paging section: 100 pages merged by the app against following nextLink directly. */
import { request } from 'undici';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { startApp } from '../tools/harness/appProcess';
import { residentBytes } from '../tools/harness/processStats';
import { appEnv, median, results, round, rows, spawnEmulator, token, usagesPath } from './benchKit';

/**
 * 10,000 items over 100 pages: merged by the app (`gateway-pages=all`, through the local host)
 * against following nextLink directly. Three of each first, so the app's fresh process runs warm
 * code as the bench's own client already does, then the median of seven alternating runs: one
 * cold run each moved the ratio between 1.0 and 1.6 on this machine.
 */
export async function paging(azurite: RunningAzurite): Promise<void> {
  const emulator = await spawnEmulator({ EMULATOR_LIST_ITEMS: '10000', EMULATOR_PAGE_SIZE: '100' });
  const app = await startApp(appEnv(emulator.url, azurite));
  const followDirectly = async () => {
    let url: string | undefined = `${emulator.url}/${usagesPath}`;
    let items = 0;
    while (url) {
      const page = (await (await request(url, { headers: { authorization: `Bearer ${token}` } })).body.json()) as { value: unknown[]; nextLink?: string };
      items += page.value.length;
      url = page.nextLink;
    }
    return items;
  };
  const merge = async () => ((await (await request(`${app.url}/api/${usagesPath}&gateway-pages=all`)).body.json()) as { value: unknown[] }).value.length;
  const pid = app.child.pid!;
  const peakBefore = residentBytes(pid, true);
  const timed = async (run: () => Promise<number>) => {
    const started = process.hrtime.bigint();
    const items = await run();
    return { ms: Number(process.hrtime.bigint() - started) / 1e6, items };
  };
  for (let warmUp = 0; warmUp < 3; warmUp += 1) {
    await followDirectly();
    await merge();
  }
  const runs = 7;
  const direct: number[] = [];
  const merged: number[] = [];
  let directItems = 0;
  let mergedItems = 0;
  for (let run = 0; run < runs; run += 1) {
    const directRun = await timed(followDirectly);
    const mergedRun = await timed(merge);
    direct.push(directRun.ms);
    merged.push(mergedRun.ms);
    directItems = directRun.items;
    mergedItems = mergedRun.items;
  }
  const peakAfter = residentBytes(pid, true);
  const directMs = round(median(direct), 1);
  const appMs = round(median(merged), 1);
  results.paging = {
    items: mergedItems,
    pages: 100,
    directItems,
    runs,
    directMs,
    appMs,
    directRunsMs: direct.map((ms) => round(ms, 1)),
    appRunsMs: merged.map((ms) => round(ms, 1)),
    appPeakResidentBeforeMiB: round(peakBefore / 2 ** 20, 1),
    appPeakResidentAfterMiB: round(peakAfter / 2 ** 20, 1),
  };
  rows.push(
    {
      section: 'paging',
      metric: `10,000 items over 100 pages, merged (median of ${runs})`,
      baseline: `${directMs} ms following nextLink directly`,
      app: `${appMs} ms, ${mergedItems} items`,
      difference: `x${round(appMs / directMs)}`,
    },
    {
      section: 'paging',
      metric: 'app peak resident memory (VmHWM)',
      baseline: `${round(peakBefore / 2 ** 20, 1)} MiB before`,
      app: `${round(peakAfter / 2 ** 20, 1)} MiB after`,
      difference: `+${round((peakAfter - peakBefore) / 2 ** 20, 1)} MiB`,
    },
  );
  await app.stop();
  emulator.child.kill('SIGTERM');
}
