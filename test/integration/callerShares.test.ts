/**
 * Callers' shares held across instances (src/access/sharedCallerRates.ts) on Azurite: several
 * limiter objects on one storage stand for several instances. What a lease costs in storage
 * requests, that racing instances never give more than the share, how the lease size adapts,
 * the fall back to each instance's own share while storage stalls (one log line each way), and
 * the bounds. A clock the test moves; storage requests counted (tools/harness/countingStorage.ts).
 */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import type { CallKind } from '../../src/access/callerRateLimiter';
import { parseBucket, type BucketState } from '../../src/access/shareBucket';
import { IdleShareBuckets } from '../../src/access/shareBucketJanitor';
import { ShareBucketStore } from '../../src/access/shareBucketStore';
import { StorageBudget } from '../../src/storage/storageBudget';
import type { Drawn, SharedCallerRates, SharedCallerRatesOptions } from '../../src/access/sharedCallerRates';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { countingStorage, type CountingStorage, type Stall } from '../../tools/harness/countingStorage';
import { sharedRatesOn } from '../../tools/harness/sharedRates';

let azurite: RunningAzurite;
let storage: CountingStorage;
let plain: BlobServiceClient;
/** What the counting client does to a request line: held behind a promise, or stalled. */
let delayOf: (line: string) => number | PromiseLike<unknown> = () => 0;
let stallOf: (line: string) => Stall | undefined = () => undefined;
let container: string;
let clock: number;

beforeAll(async () => {
  azurite = await startAzurite();
  storage = countingStorage(
    azurite.connectionString,
    (line) => delayOf(line),
    (line) => stallOf(line),
  );
  plain = BlobServiceClient.fromConnectionString(azurite.connectionString);
});
afterAll(() => azurite.close());
beforeEach(() => {
  container = `s${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  clock = Date.parse('2026-06-01T00:00:00Z');
  delayOf = () => 0;
  stallOf = () => undefined;
  storage.reset();
});

const bucketWrites = () => storage.requests.filter((line) => /^PUT \S*caller-shares\//.test(line));

/** One instance's shares, with a lease take's budget long enough for a busy machine unless a test stalls storage. */
const instance = (options: Partial<SharedCallerRatesOptions> = {}, lines: string[] = []): SharedCallerRates =>
  sharedRatesOn(storage.service, () => container, { timeoutMs: 2000, maxCallers: 100, now: () => clock, warn: (line) => lines.push(line), ...options });

async function storedBucket(subject: string, kind: CallKind = 'reads'): Promise<BucketState> {
  const blob = new ShareBucketStore(() => plain.getContainerClient(container)).blobOf(subject, kind);
  return parseBucket((await blob.downloadToBuffer()).toString('utf8'))!;
}

/** `rounds` rounds of one call from each instance, the instances' calls at once (racing); the number allowed. */
async function drain(instances: SharedCallerRates[], subject: string, perMinute: number, rounds: number): Promise<number> {
  let allowed = 0;
  for (let round = 0; round < rounds; round += 1) {
    const drawn = await Promise.all(instances.map((rates) => rates.take(subject, 'reads', perMinute)));
    allowed += drawn.filter((one) => one.allowed).length;
  }
  return allowed;
}

describe('a caller share held across instances', () => {
  it('costs one write per lease of calls when one instance draws, and nothing per call served from a lease', async () => {
    const rates = instance();
    // The first call: the bucket read (none yet), its create, the container's, the create again.
    expect((await rates.take('key:steady', 'reads', 60)).allowed).toBe(true);
    await rates.settled();
    expect(storage.requests).toHaveLength(4);
    storage.reset();
    // Steadily at its share (one a second) for two minutes.
    const calls = 120;
    for (let call = 0; call < calls; call += 1) {
      clock += 1000;
      expect((await rates.take('key:steady', 'reads', 60)).allowed).toBe(true);
      await rates.settled();
    }
    // Writes only (each on the ETag this instance last wrote), a quarter of a request a call at most:
    // the leases grew with the demand.
    expect(storage.requests.every((line) => line.startsWith('PUT '))).toBe(true);
    expect(storage.requests.length / calls).toBeLessThanOrEqual(0.25);
  });

  it('leases at most CALLER_SHARE_MAX_LEASE calls ahead of need', async () => {
    const rates = instance({ maxLease: 2 });
    await drain([rates], 'key:small', 600, 60);
    await rates.settled();
    // 60 calls in leases of two at most (the first of one).
    expect(bucketWrites().length).toBeGreaterThanOrEqual(30);
  });

  it.each([2, 4])('never gives more than the share to %i instances drawing at once', async (count) => {
    const instances = Array.from({ length: count }, () => instance());
    // The clock stands still: no refill, so the share at most (each instance alone would give its own 60).
    const allowed = await drain(instances, 'key:racer', 60, 200);
    expect(allowed).toBeLessThanOrEqual(60);
    // Every leased call was used: the clock stands still, so no lease expired.
    expect(allowed).toBe(60);
    expect((await storedBucket('key:racer')).tokens).toBe(0);
  });

  it('holds the share when the leases are used after the bucket refilled: calls leased ahead are capped out of the refill', async () => {
    const [first, second] = [instance(), instance()];
    expect(await drain([first!, second!], 'key:held', 60, 20)).toBe(40);
    // Both hold leased calls they did not use yet; the bucket refills for five seconds (within the lifetime).
    clock += 5000;
    const burst = await drain([first!, second!], 'key:held', 60, 200);
    // Within a window of five seconds: the minute's share and five seconds of refill at most.
    expect(40 + burst).toBeLessThanOrEqual(60 + 5);
  });

  it('lets a caller that used every call it leased draw again as soon as the bucket refills', async () => {
    const rates = instance();
    expect(await drain([rates], 'key:burst', 60, 61)).toBe(60);
    clock += 1000;
    expect((await rates.take('key:burst', 'reads', 60)).allowed).toBe(true);
  });

  it('takes one call a lease when the bucket is nearly empty, and less ahead with more instances drawing', async () => {
    const alone = instance();
    const writesOfEachCall: number[] = [];
    for (let call = 0; call < 30; call += 1) {
      storage.reset();
      expect((await alone.take('key:alone', 'reads', 30)).allowed).toBe(true);
      await alone.settled();
      writesOfEachCall.push(bucketWrites().length);
    }
    const writesOf = (calls: number[]) => calls.reduce((sum, writes) => sum + writes, 0);
    const aloneWrites = writesOf(writesOfEachCall);
    // Leases of several calls while the bucket is far from empty (after the first two, which
    // learn the demand), of one call each near the end: a write for most of the last calls.
    expect(aloneWrites).toBeLessThan(20);
    expect(writesOf(writesOfEachCall.slice(2, 12))).toBeLessThanOrEqual(3);
    expect(writesOf(writesOfEachCall.slice(-10))).toBeGreaterThanOrEqual(5);
    // Four instances drawing the same share: smaller leases, more of them.
    const four = Array.from({ length: 4 }, () => instance());
    storage.reset();
    expect(await drain(four, 'key:four', 30, 10)).toBe(30);
    await Promise.all(four.map((rates) => rates.settled()));
    expect(bucketWrites().length).toBeGreaterThan(aloneWrites);
    expect(new Set((await storedBucket('key:four')).leases.map(([, , taker]) => taker)).size).toBeGreaterThan(1);
  });

  it('tries a lease write at most CALLER_SHARE_ATTEMPTS times, each round of a call too, then refuses rather than guess', async () => {
    // One round is enough when nobody else writes.
    expect((await instance({ attempts: 1 }).take('key:once', 'reads', 60)).allowed).toBe(true);
    const rates = instance({ attempts: 2 });
    expect((await rates.take('key:contended', 'reads', 60)).allowed).toBe(true);
    // From now on another writer changes the bucket just before each of this instance's writes.
    const other = new ShareBucketStore(() => plain.getContainerClient(container)).blobOf('key:contended', 'reads');
    delayOf = (line) => (/^PUT \S*caller-shares\//.test(line) ? other.downloadToBuffer().then((text) => other.upload(text, text.length)) : 0);
    storage.reset();
    clock += 60_000;
    // The lease of the first call was one call: the next needs a lease.
    const drawn = await rates.take('key:contended', 'reads', 60);
    expect(drawn).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(bucketWrites()).toHaveLength(2 * 2);
  });

  it('waits on storage no longer than CALLER_SHARE_TIMEOUT_MS in all, whatever the rounds of leases: then answers from its own share', async () => {
    const rates = instance({ attempts: 2, timeoutMs: 1500 });
    expect((await rates.take('key:slow', 'reads', 60)).allowed).toBe(true);
    await rates.settled();
    // From now on each lease write waits 600 ms, and another writer changes the bucket meanwhile:
    // a lease take (two writes) ends contended within its budget, and a second round would end
    // after the call's budget (its second write is not even sent by then).
    const other = new ShareBucketStore(() => plain.getContainerClient(container)).blobOf('key:slow', 'reads');
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    delayOf = (line) =>
      /^PUT \S*caller-shares\//.test(line)
        ? wait(600)
            .then(() => other.downloadToBuffer())
            .then((text) => other.upload(text, text.length))
        : 0;
    storage.reset();
    clock += 60_000;
    expect((await rates.take('key:slow', 'reads', 60)).allowed).toBe(true);
    expect(bucketWrites().length).toBeLessThan(2 * 2);
    await rates.settled();
  });

  it('stops using a lease a margin for clocks that differ before the bucket drops its record', async () => {
    const rates = instance();
    const drawn = (await rates.take('key:skew', 'reads', 60)) as Extract<Drawn, { allowed: true }>;
    await rates.settled();
    // The call given back is held in the lease, which the bucket counts for ten seconds (the lifetime).
    drawn.giveBack();
    storage.reset();
    clock += 7000;
    expect((await rates.take('key:skew', 'reads', 60)).allowed).toBe(true);
    expect(storage.requests).toEqual([]);
    drawn.giveBack();
    // Within the lifetime, but within two seconds of its end: another lease is taken.
    clock += 1500;
    expect((await rates.take('key:skew', 'reads', 60)).allowed).toBe(true);
    expect(bucketWrites()).toHaveLength(1);
  });

  it('gives a call back to the local lease, never to the shared bucket', async () => {
    const rates = instance();
    const drawn = (await rates.take('key:back', 'reads', 60)) as Extract<Drawn, { allowed: true }>;
    await rates.settled();
    const before = await storedBucket('key:back');
    storage.reset();
    drawn.giveBack();
    drawn.giveBack();
    expect(await storedBucket('key:back')).toEqual(before);
    // The call given back is served from the lease: no storage request.
    expect((await rates.take('key:back', 'reads', 60)).allowed).toBe(true);
    expect(storage.requests).toEqual([]);
  });

  it('refuses an empty bucket from what it last saw, without a storage request per refused call', async () => {
    const rates = instance();
    expect(await drain([rates], 'key:empty', 6, 50)).toBe(6);
    storage.reset();
    for (let call = 0; call < 20; call += 1) expect(await rates.take('key:empty', 'reads', 6)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    expect(storage.requests).toEqual([]);
    clock += 10_000;
    expect((await rates.take('key:empty', 'reads', 6)).allowed).toBe(true);
  });

  it('falls back to its own share per caller while storage stalls, with one log line, and back with one more', async () => {
    const lines: string[] = [];
    const rates = instance({ timeoutMs: 300 }, lines);
    expect((await rates.take('key:stalled', 'reads', 6)).allowed).toBe(true);
    await rates.settled();
    stallOf = () => 'request';
    storage.reset();
    clock += 10_000;
    // The lease take stalls: the call is answered from the instance's own share within the budget.
    expect((await rates.take('key:stalled', 'reads', 6)).allowed).toBe(true);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        event: 'storage',
        subject: 'caller shares',
        state: 'down',
        code: 'StorageUnavailable',
        detail: 'Caller shares did not take a lease of calls within 300 ms.',
        fallback: expect.stringMatching(/^each instance keeps a share of its own for each caller/),
        retryAfterMs: 10_000,
      },
    ]);
    // Calls meanwhile wait on no storage and log nothing more; the own share holds (six a minute,
    // the one served from the lease before counted, and ten seconds' refill of one).
    storage.reset();
    const meanwhile = await Promise.all(Array.from({ length: 8 }, () => rates.take('key:stalled', 'reads', 6)));
    expect(meanwhile.filter((drawn) => drawn.allowed)).toHaveLength(5);
    expect(storage.requests).toEqual([]);
    expect(lines).toHaveLength(1);
    // Once a lease lifetime later, storage is tried again in the background; it answers: one line, shared again.
    stallOf = () => undefined;
    clock += 10_000;
    await rates.take('key:stalled', 'reads', 6);
    await rates.settled();
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toEqual({ event: 'storage', subject: 'caller shares', state: 'back', downForMs: 10_000 });
    storage.reset();
    expect((await rates.take('key:stalled', 'reads', 6)).allowed).toBe(true);
    await rates.settled();
    expect(lines).toHaveLength(2);
  });

  it('remembers at most CALLER_SHARE_MAX_CALLERS callers, the least recently used forgotten first', async () => {
    const rates = instance({ maxCallers: 3 });
    for (let caller = 0; caller < 10; caller += 1) await rates.take(`key:caller${caller}`, caller % 2 ? 'reads' : 'writes', 60);
    expect(rates.size).toBe(3);
  });

  it('has the janitor remove buckets idle past a minute, a lease lifetime and a margin for clocks, at most the batch a run, on the ETag listed', async () => {
    const rates = instance();
    const callers = ['a', 'b', 'c', 'd'].map((name) => `key:idle-${name}`);
    for (const caller of callers) expect((await rates.take(caller, 'reads', 60)).allowed).toBe(true);
    await rates.settled();
    const janitor = new IdleShareBuckets(storage.service.getContainerClient(container), new StorageBudget(2000, 'Caller share buckets'), 10_000);
    const buckets = async () => {
      const names: string[] = [];
      for await (const item of plain.getContainerClient(container).listBlobsFlat({ prefix: 'caller-shares/' })) names.push(item.name);
      return names;
    };
    // Written just now (by the storage service's clock): none is idle yet.
    expect(await janitor.removeExpired(Date.now(), 10)).toBe(0);
    expect(await buckets()).toHaveLength(4);
    const idleAt = () => Date.now() + janitor.idleAfterMs + 1000;
    // A bucket written again between the listing and its delete is live again: it stays.
    const rewritten = plain.getContainerClient(container).getBlockBlobClient((await buckets())[0]!);
    delayOf = (line) =>
      line.startsWith('DELETE ') && line.includes(rewritten.name) ? rewritten.downloadToBuffer().then((text) => rewritten.upload(text, text.length)) : 0;
    expect(await janitor.removeExpired(idleAt(), 3)).toBe(2);
    delayOf = () => 0;
    expect(await buckets()).toEqual([rewritten.name, expect.any(String)]);
    // The rest of the page waited for the next run: every idle one goes in turn.
    expect(await janitor.removeExpired(idleAt(), 3)).toBe(2);
    expect(await buckets()).toEqual([]);
    // An instance holding a removed bucket's ETag reads it again (absent: full) and writes it anew.
    clock += 60_000;
    expect((await rates.take(callers[1]!, 'reads', 60)).allowed).toBe(true);
    expect((await storedBucket(callers[1]!)).tokens).toBeGreaterThan(0);
  });
});
