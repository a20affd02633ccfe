/** The certificates section: upstream calls of a refresh of 100 environments, and of one again within the minute. */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { CertificateRefresher } from '../src/certificates';
import { CertificateStore } from '../src/certificates';
import { DistributedRateLimiter } from '../src/certificates';
import { UpstreamClient } from '../src/upstream';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { startEmulator } from '../tools/emulator/emulatorServer';
import { results, rows, token } from './benchKit';

export async function certificates(azurite: RunningAzurite): Promise<void> {
  const emulator = await startEmulator({ token });
  const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
  const container = blobs.getContainerClient(`bench-${randomUUID().slice(0, 8)}`);
  const store = new CertificateStore(container, blobs.getContainerClient(`bench-secrets-${randomUUID().slice(0, 8)}`), 3);
  const refresher = new CertificateRefresher({
    store,
    limiter: new DistributedRateLimiter(container, 60_000),
    upstream: new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 10_000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    versionHeader: ['x-vendor-version', '2017-09-15'],
    policy: { renewBeforeMs: 14 * 24 * 3600_000, alertBeforeMs: 7 * 24 * 3600_000 },
    maxBundleBytes: 1024 * 1024,
    concurrency: 4,
    now: Date.now,
    log: () => undefined,
    warn: () => undefined,
  });
  const environments = Array.from({ length: 100 }, (_unused, index) => ({ projectId: 1000 + index, environmentId: randomUUID() }));
  const run = async (force: boolean) => {
    const before = emulator.upstreamRequests().length;
    const started = Date.now();
    const outcomes = await refresher.refreshAll(environments, { force, trigger: 'bench', token });
    const calls = emulator.upstreamRequests().length - before;
    return {
      calls,
      ms: Date.now() - started,
      downloaded: outcomes.filter((outcome) => outcome.outcome === 'downloaded').length,
      rateLimited: outcomes.filter((outcome) => outcome.outcome === 'rate-limited').length,
    };
  };
  const first = await run(false);
  const second = await run(false);
  const forced = await run(true);
  // 429s the service would have answered: calls it saw within a minute of the previous one.
  const throttled = emulator.requests.length - new Set(emulator.requests.map((seen) => seen.path)).size;
  results.certificates = { environments: 100, first, secondWithinTheMinute: second, forcedWithinTheMinute: forced, upstream429s: throttled };
  rows.push(
    {
      section: 'certificates',
      metric: '100 environments, first refresh',
      baseline: '100 calls needed',
      app: `${first.calls} calls, ${first.downloaded} stored, ${first.ms} ms`,
      difference: `${first.calls - 100} calls`,
    },
    {
      section: 'certificates',
      metric: 'again within the minute (fresh / forced)',
      baseline: '0 calls allowed',
      app: `${second.calls} / ${forced.calls} calls (${forced.rateLimited} held back)`,
      difference: `${throttled} upstream 429s provoked`,
    },
  );
  await emulator.close();
}
