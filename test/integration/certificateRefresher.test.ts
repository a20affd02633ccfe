/**
 * The certificate refresher against the emulator and Azurite, sharing one clock: downloads
 * only when needed, one call per environment per minute, and every failure leaves the current
 * certificate as it was with a record of what happened.
 */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { zipSync } from 'fflate';
import { CertificateRefresher, type CertificateEnvironment } from '../../src/certificates/certificateRefresher';
import { CertificateStore } from '../../src/certificates/certificateStore';
import { CertificateWatch } from '../../src/certificates/certificateWatch';
import { DistributedRateLimiter } from '../../src/certificates/rateLimiter';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { azuriteConnectionString, startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { makeCertificateBundle } from '../../tools/emulator/certificateBundle';
import { startEmulator, type Emulator, type ScriptedAnswer } from '../../tools/emulator/emulatorServer';
import { faultRefusals } from '../helpers/certificateRefusals';
import { scanForSecrets } from '../../tools/harness/secretScan';
import { startStallingProxy } from '../helpers/stallingProxy';

const token = 'emulator-token';
let clock = Date.parse('2026-06-01T00:00:00Z');
let emulator: Emulator;
let azurite: RunningAzurite;
let blobService: BlobServiceClient;
let store: CertificateStore;
let refresher: CertificateRefresher;
let secretsContainer: string;
const logs: string[] = [];
const warnings: string[] = [];
const day = 24 * 3600_000;
const policy = { renewBeforeMs: 14 * day, alertBeforeMs: 7 * day };

const environments: CertificateEnvironment[] = [1, 2, 3].map((index) => ({ projectId: 100 + index, environmentId: randomUUID() }));
const [first] = environments as [CertificateEnvironment];
const options = { force: false, trigger: 'timer', token };

function makeRefresher(bundles: string, secrets: string): CertificateRefresher {
  const bundleContainer = blobService.getContainerClient(bundles);
  store = new CertificateStore(bundleContainer, blobService.getContainerClient(secrets), 2);
  return new CertificateRefresher({
    store,
    limiter: new DistributedRateLimiter(bundleContainer, 60_000),
    upstream: new UpstreamClient({ baseUrl: emulator.url, timeoutMs: 2000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
    versionHeader: ['x-vendor-version', '2017-09-15'],
    policy,
    maxBundleBytes: 1024 * 1024,
    concurrency: 2,
    now: () => clock,
    log: (line) => logs.push(line),
    warn: (line) => warnings.push(line),
  });
}

const zipOf = (pfx: Uint8Array) => Buffer.from(zipSync({ 'a.pfx': pfx, 'a.cer': new Uint8Array([1]) })).toString('base64');
const downloads = () => emulator.upstreamRequests({ pathIncludes: '/rsatdownload/' });
const downloadAnswer = (data: Record<string, unknown>) => ({
  kind: 'answer' as const,
  status: 200,
  body: {
    Data: {
      CertificateThumbprint: 'ABCDEF',
      ExpirationISODateTimeUTC: '2027-01-01T00:00:00Z',
      CertificateSecretEncoded: 'c2VjcmV0',
      Filename: 'x.zip',
      ...data,
    },
    IsSuccess: true,
    ErrorMessage: null,
  },
});

beforeAll(async () => {
  emulator = await startEmulator({ token, now: () => clock });
  azurite = await startAzurite();
  blobService = BlobServiceClient.fromConnectionString(azurite.connectionString);
  const suffix = randomUUID().slice(0, 8);
  secretsContainer = `secrets-${suffix}`;
  refresher = makeRefresher(`bundles-${suffix}`, secretsContainer);
});
afterAll(async () => {
  await emulator.close();
  await azurite.close();
});

async function secretBlobs(): Promise<string[]> {
  const names: string[] = [];
  for await (const blob of blobService.getContainerClient(secretsContainer).listBlobsFlat()) names.push(blob.name);
  return names;
}

describe('CertificateRefresher', () => {
  it('downloads three environments, then makes no call while they are fresh', async () => {
    const results = await refresher.refreshAll(environments, options);
    expect(results.map((result) => result.outcome)).toEqual(['downloaded', 'downloaded', 'downloaded']);
    expect(downloads()).toHaveLength(3);
    expect(downloads()[0]!.headers['x-vendor-version']).toBe('2017-09-15');

    clock += 10_000;
    const again = await refresher.refreshAll(environments, options);
    expect(again.map((result) => result.outcome)).toEqual(['fresh', 'fresh', 'fresh']);
    expect(downloads()).toHaveLength(3);

    const record = await store.read(first.projectId, first.environmentId);
    // The emulator's certificates run from a day before the download to 180 days after it.
    expect(record.current).toMatchObject({
      projectId: first.projectId,
      thumbprint: results[0]!.thumbprint,
      fetchedBy: 'timer',
      notBefore: new Date(clock - 10_000 - day).toISOString(),
      expiresAt: new Date(clock - 10_000 + 180 * day).toISOString(),
      subject: `CN=RSAT env-${first.environmentId.slice(0, 8)}`,
      issuer: `CN=RSAT env-${first.environmentId.slice(0, 8)}`,
      serviceSaid: {
        expirationDateTimeUtc: expect.stringMatching(/^\w+day, \w+ \d+, \d{4} \d+:\d\d:\d\d [AP]M$/),
        expirationIsoDateTimeUtc: expect.any(String),
      },
    });
    expect(record.current!.files.map((file) => file.name).sort()).toEqual([expect.stringMatching(/\.cer$/), expect.stringMatching(/\.pfx$/)]);
    expect(await secretBlobs()).toHaveLength(3);
    expect(logs.join('\n')).not.toMatch(/CertificateSecretEncoded|c2VjcmV0/);
  });

  it('a forced refresh within the minute is refused by the limiter without a call', async () => {
    const before = downloads().length;
    const [result] = await refresher.refreshAll([first], { ...options, force: true });
    expect(result).toMatchObject({ outcome: 'rate-limited', retryAt: expect.any(String) });
    expect(downloads()).toHaveLength(before);
  });

  it('a 429 with retry-after sets the next allowed time; nothing is called before it', async () => {
    clock += 61_000;
    emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '300' }, pathPattern: 'rsatdownload' });
    const before = (await store.read(first.projectId, first.environmentId)).current;
    const [throttled] = await refresher.refreshAll([first], { ...options, force: true });
    expect(throttled).toMatchObject({ outcome: 'rate-limited', retryAt: new Date(clock + 300_000).toISOString() });

    clock += 120_000;
    const calls = downloads().length;
    const [still] = await refresher.refreshAll([first], { ...options, force: true });
    expect(still!.outcome).toBe('rate-limited');
    expect(downloads()).toHaveLength(calls);
    expect((await store.read(first.projectId, first.environmentId)).current).toEqual(before);
  });

  it.each<[string, ScriptedAnswer, string, string | undefined]>([
    [
      'IsSuccess: false',
      { kind: 'answer' as const, status: 200, body: { Data: null, IsSuccess: false, ErrorMessage: 'You are not an environment administrator.' } },
      'DownloadFailed',
      'You are not an environment administrator.',
    ],
    ['corrupt base64', downloadAnswer({ CertificateZipEncoded: 'UEs*not base64*' }), 'CorruptBase64', 'not valid base64'],
    [
      'a zip without the .pfx',
      downloadAnswer({ CertificateZipEncoded: Buffer.from(zipSync({ 'a.cer': new Uint8Array([1]) })).toString('base64') }),
      'MissingPfx',
      'no .pfx',
    ],
    // 1 MB on the wire, 1 GiB in memory: refused from the zip's directory, before inflating.
    ['a zip bomb', downloadAnswer({ CertificateZipEncoded: zipOf(new Uint8Array(8 * 1024 * 1024)) }), 'BundleTooLarge', 'more than'],
    [
      'a secret that is not base64',
      downloadAnswer({ CertificateZipEncoded: makeCertificateBundle('x', clock).zip.toString('base64'), CertificateSecretEncoded: 'not base64!' }),
      'UpstreamBadResponse',
      'secret',
    ],
    // Each bundle a careful operator refuses (an expired one, however valid the current
    // certificate is, included), built by the emulator with real certificates.
    // (Each row has all four cells: jest passes `done` in place of a missing one.)
    ...faultRefusals.map(([fault, code]): [string, ScriptedAnswer, string, string | undefined] => [
      `a bundle with fault ${fault}`,
      { kind: 'certificate', certificate: { fault } },
      code,
      undefined,
    ]),
  ])('%s leaves the current certificate as it was, with a record', async (_title, answer, code, message) => {
    clock += 10 * 60_000;
    const before = (await store.read(first.projectId, first.environmentId)).current;
    emulator.script({ ...answer, pathPattern: 'rsatdownload' });
    const [result] = await refresher.refreshAll([first], { ...options, force: true });
    expect(result).toMatchObject({ outcome: 'failed', error: { code, message: message ? expect.stringContaining(message) : expect.any(String) } });
    const after = await store.read(first.projectId, first.environmentId);
    expect(after.current).toEqual(before);
    expect(after.lastAttempt).toMatchObject({ outcome: 'failed', error: { code } });
  });

  it("stores the certificate's own expiry, not the answer's", async () => {
    clock += 10 * 60_000;
    const bundle = makeCertificateBundle('told', clock, { validForDays: 30 });
    emulator.context.lifecycle.issuedSecrets.push(bundle.secretEncoded, bundle.password);
    emulator.script({
      ...downloadAnswer({
        CertificateZipEncoded: bundle.zip.toString('base64'),
        CertificateSecretEncoded: bundle.secretEncoded,
        CertificateThumbprint: bundle.thumbprint.toLowerCase(),
        ExpirationISODateTimeUTC: '2099-01-01T00:00:00Z',
      }),
      pathPattern: 'rsatdownload',
    });
    const [result] = await refresher.refreshAll([first], { ...options, force: true });
    expect(result).toMatchObject({ outcome: 'downloaded', thumbprint: bundle.thumbprint, expiresAt: bundle.notAfter.toISOString() });
    expect((await store.read(first.projectId, first.environmentId)).current).toMatchObject({
      expiresAt: bundle.notAfter.toISOString(),
      serviceSaid: { expirationIsoDateTimeUtc: '2099-01-01T00:00:00Z' },
    });
  });

  it('a blob write failing midway leaves the current certificate as it was', async () => {
    clock += 10 * 60_000;
    const before = (await store.read(first.projectId, first.environmentId)).current;
    // The secrets container disappears under the store: the zip is written, the secret is not.
    await blobService.getContainerClient(secretsContainer).delete();
    const [result] = await refresher.refreshAll([first], { ...options, force: true });
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'StorageUnavailable' } });
    expect((await store.read(first.projectId, first.environmentId)).current).toEqual(before);
    await blobService.getContainerClient(secretsContainer).create();
  });

  it('keeps older bundles up to the configured count', async () => {
    for (let round = 0; round < 3; round += 1) {
      clock += 2 * 60_000;
      const [result] = await refresher.refreshAll([first], { ...options, force: true });
      expect(result!.outcome).toBe('downloaded');
    }
    const record = await store.read(first.projectId, first.environmentId);
    expect(record.kept).toHaveLength(2);
    expect(record.kept).toContain(record.current!.thumbprint);
  });
  it('holds a retry-after beyond reason to a day', async () => {
    clock += 10 * 60_000;
    emulator.script({ kind: 'answer', status: 429, headers: { 'retry-after': '99999999999999' }, pathPattern: 'rsatdownload' });
    const [throttled] = await refresher.refreshAll([first], { ...options, force: true });
    expect(throttled).toMatchObject({ outcome: 'rate-limited' });
    expect(Date.parse(throttled!.retryAt!)).toBe(clock + 24 * 3600_000);
    clock += 24 * 3600_000;
  });

  it('never stays locked by a stored time beyond reason (written before the bound existed)', async () => {
    const container = blobService.getContainerClient(`limits-${randomUUID().slice(0, 8)}`);
    const limits = new DistributedRateLimiter(container, 60_000);
    await limits.read('warm-up');
    const stale = JSON.stringify({ nextAllowedAt: 99999999999999 * 1000, reason: 'throttled' });
    await container.getBlockBlobClient('limits/7/env.json').upload(stale, stale.length);
    const writtenAt = Date.now();
    const acquired = await limits.tryAcquire('7/env', writtenAt);
    expect(acquired).toMatchObject({ allowed: false });
    const retryAt = (acquired as { retryAt: number }).retryAt;
    expect(retryAt).toBeLessThanOrEqual(writtenAt + 60_000 + 24 * 3600_000);
    expect(() => new Date(retryAt).toISOString()).not.toThrow();
    expect(await limits.tryAcquire('7/env', retryAt + 1)).toEqual({ allowed: true });
  });

  describe('watching certificates that run out', () => {
    const watched = { projectId: 201, environmentId: randomUUID() };
    // The emulator answers IsSuccess: false for environments whose id starts with "dead".
    const missing = { projectId: 202, environmentId: `dead${randomUUID().slice(4)}` };
    const neverTried = { projectId: 203, environmentId: randomUUID() };
    const fresh = environments[1]!;
    let watchedExpiresAt: string;
    const warned = () => warnings.map((line) => JSON.parse(line) as Record<string, unknown>).sort((a, b) => Number(a.projectId) - Number(b.projectId));

    it('warns once per run of each environment whose certificate runs out and whose refresh failed', async () => {
      clock += 10 * 60_000;
      emulator.script({ kind: 'certificate', certificate: { validForDays: 10 }, pathPattern: watched.environmentId });
      const downloaded = await refresher.refresh(watched, options);
      expect(downloaded.outcome).toBe('downloaded');
      watchedExpiresAt = downloaded.expiresAt!;
      expect(warnings).toEqual([]);

      for (const [advanceMs, daysLeft, alert] of [
        [2 * 60_000, 9, false],
        [4 * day, 5, true],
      ] as const) {
        clock += advanceMs;
        warnings.length = 0;
        emulator.script({ kind: 'certificate', certificate: { fault: 'wrong-password' }, pathPattern: watched.environmentId });
        const results = await refresher.refreshAll([watched, missing, fresh], options);
        expect(results.map((result) => result.outcome)).toEqual(['failed', 'failed', 'fresh']);
        expect(warned()).toEqual([
          { event: 'certificate-at-risk', trigger: 'timer', ...watched, expiresAt: watchedExpiresAt, daysLeft, lastErrorCode: 'PfxPasswordInvalid', alert },
          { event: 'certificate-at-risk', trigger: 'timer', ...missing, expiresAt: null, daysLeft: null, lastErrorCode: 'DownloadFailed', alert: true },
        ]);
      }
      expect(warnings.join('\n')).not.toMatch(/message|Secret/i);
    });

    it('the watch health uses finds the same environments in the store, and no others', async () => {
      const watch = new CertificateWatch({
        store,
        environments: [watched, missing, fresh, neverTried],
        policy,
        timeoutMs: 2000,
        concurrency: 2,
        now: () => clock,
      });
      expect(await watch.report()).toEqual({
        environments: 4,
        atRisk: [
          { ...watched, expiresAt: watchedExpiresAt, daysLeft: 5, lastErrorCode: 'PfxPasswordInvalid', alert: true },
          { ...missing, expiresAt: null, daysLeft: null, lastErrorCode: 'DownloadFailed', alert: true },
        ],
      });
    });

    it('the watch answers within its own budget when storage stalls, saying the list is unknown', async () => {
      const endpoint = new URL(azurite.blobEndpoint);
      const proxy = await startStallingProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
      const stalled = BlobServiceClient.fromConnectionString(azuriteConnectionString(`${proxy.origin}/devstoreaccount1`));
      // Each store call has its own budget (1 s here); the watch's (HEALTH_PROBE_TIMEOUT_MS) bounds the whole look.
      const stalledStore = new CertificateStore(stalled.getContainerClient('stalled-bundles'), stalled.getContainerClient('stalled-secrets'), 2, 1000);
      try {
        proxy.stall();
        const watch = new CertificateWatch({ store: stalledStore, environments: [watched, missing], policy, timeoutMs: 200, concurrency: 2, now: () => clock });
        const started = performance.now();
        expect(await watch.report()).toEqual({ environments: 2, atRisk: [], error: 'StorageUnavailable' });
        expect(performance.now() - started).toBeLessThan(800);
      } finally {
        // Let the held calls through and end, so no SDK retry outlives the test.
        proxy.resume();
        await stalledStore.readStatus(watched.projectId, watched.environmentId);
        await proxy.close();
      }
    });

    it('a later successful refresh takes the environment off the list', async () => {
      clock += 2 * 60_000;
      warnings.length = 0;
      expect((await refresher.refresh(watched, options)).outcome).toBe('downloaded');
      const watch = new CertificateWatch({ store, environments: [watched], policy, timeoutMs: 2000, concurrency: 2, now: () => clock });
      expect(await watch.report()).toEqual({ environments: 1, atRisk: [] });
      expect(warnings).toEqual([]);
    });
  });

  it('leaves no secret or password anywhere but the secrets container: not in the log, not beside the bundles', async () => {
    const { issuedSecrets } = emulator.context.lifecycle;
    expect(issuedSecrets.length).toBeGreaterThan(20);
    expect(
      await scanForSecrets({ lines: logs, connectionString: azurite.connectionString, secrets: issuedSecrets, allowedContainers: [secretsContainer] }),
    ).toEqual([]);
  });
});
