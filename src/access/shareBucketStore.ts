/**
 * The shared buckets of callers' shares in blob storage: one small JSON blob per rate subject
 * and kind of call (`caller-shares/<kind>/<hash of the subject>.json` in the orchestration
 * container), changed only by writes conditioned on the ETag read (or on there being none), so
 * of two instances taking a lease at once exactly one writes and the other reads again.
 *
 * A lease costs one write when nobody else drew on the bucket lately (the state this instance
 * wrote is the state it starts from), and a read and a write otherwise. Buckets idle for long are
 * removed by the janitor (shareBucketJanitor.ts).
 */
import { createHash } from 'node:crypto';
import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { RecordStore, type RecordCalls, type RecordFormat } from '../storage';
import { StorageBudget } from '../storage';
import type { CallKind } from './callerRateLimiter';
import { parseBucket, takeLease, type BucketState, type LeaseOutcome, type LeaseRequest } from './shareBucket';

/** A bucket as last seen: its state and ETag (undefined: no blob yet). */
export interface SeenBucket {
  state: BucketState | undefined;
  etag: string | undefined;
}

export type StoreLease =
  | { kind: 'taken'; outcome: LeaseOutcome; seen: SeenBucket }
  /** Every try found another instance's write first. */
  | { kind: 'contended' };

/** Where the buckets are named, in the orchestration container. */
export const shareBucketPrefix = 'caller-shares/';

/** A bucket's text: its JSON, read leniently (one that is not a bucket reads as none). */
const bucketFormat: RecordFormat<BucketState | undefined> = { text: (state) => JSON.stringify(state), value: parseBucket, contentType: 'application/json' };

export class ShareBucketStore {
  /**
   * The buckets, their container made when the first write of a new storage account finds none.
   * A lease take runs on the abort signal of the lease's budget (SharedCallerRates'); this
   * store's own budget bounds only a call made apart from one.
   */
  readonly #buckets: RecordStore<BucketState | undefined>;

  constructor(
    container: () => ContainerClient,
    private readonly prefix = shareBucketPrefix,
    storageTimeoutMs = 10_000,
  ) {
    this.#buckets = new RecordStore({
      container,
      budget: new StorageBudget(storageTimeoutMs, 'Caller share buckets'),
      makeContainer: 'when missing',
      format: bucketFormat,
    });
  }

  /** The subject is hashed: a Slack or Teams id holds characters a blob name should not, and the name need not say whose it is. */
  blobOf(subject: string, kind: CallKind): BlockBlobClient {
    const digest = createHash('sha256').update(subject).digest('hex').slice(0, 32);
    return this.#buckets.blob(`${this.prefix}${kind}/${digest}.json`);
  }

  async #read(buckets: RecordCalls<BucketState | undefined>, blob: BlockBlobClient): Promise<SeenBucket> {
    const stored = await buckets.read(blob.name);
    return stored ? { state: stored.value, etag: stored.etag } : { state: undefined, etag: undefined };
  }

  /** Writes `state` if the blob is still at `etag` (none: still absent); its new ETag, or undefined when another writer was first. */
  #write(buckets: RecordCalls<BucketState | undefined>, blob: BlockBlobClient, state: BucketState, etag: string | undefined): Promise<string | undefined> {
    return etag ? buckets.replace(blob.name, state, etag) : buckets.create(blob.name, state);
  }

  /**
   * Takes a lease from the bucket, starting from `seen` (the state this instance last wrote,
   * which a failed condition proves stale) or a fresh read, at most `attempts` writes. An empty
   * bucket is read before it is believed.
   */
  async take(
    blob: BlockBlobClient,
    seen: SeenBucket | undefined,
    request: (contended: boolean) => LeaseRequest,
    attempts: number,
    abortSignal: AbortSignal,
  ): Promise<StoreLease> {
    const buckets = this.#buckets.on(abortSignal);
    const { taker, lifetimeMs } = request(false);
    // A state other instances drew on when it was written is likely stale by now: read it rather than try a write bound to fail.
    const sharedLately = seen?.state?.leases.some(([takenAt, , other]) => other !== taker && takenAt > seen.state!.updatedAt - lifetimeMs);
    let current = sharedLately ? undefined : seen;
    // A write after a fresh read that still fails is a race with another instance at this very
    // moment; one conditioned on a state this instance wrote earlier fails whenever any other wrote since.
    let contended = false;
    for (let attempt = 0; attempt < attempts;) {
      const fresh = current === undefined;
      current ??= await this.#read(buckets, blob);
      const outcome = takeLease(current.state, request(contended));
      if (outcome.count === 0) {
        // Another instance may have given up calls it held since this one wrote: read before refusing.
        if (fresh) return { kind: 'taken', outcome, seen: current };
        current = undefined;
        continue;
      }
      attempt += 1;
      const etag = await this.#write(buckets, blob, outcome.next, current.etag);
      if (etag) return { kind: 'taken', outcome, seen: { state: outcome.next, etag } };
      contended ||= fresh;
      current = undefined;
    }
    return { kind: 'contended' };
  }
}
