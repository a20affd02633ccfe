/**
 * Certificate bundles in blob storage. A bundle is written completely
 * under `{projectId}/{environmentId}/{thumbprint}-{fetchId}/` (metadata and zip in one private
 * container, the secret in another), and only then made current by replacing the
 * environment's `current.json`. A failure at any step leaves the current certificate as it was.
 */
import { randomBytes } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { statusCodeOf } from '../storage';
import { containerMadeOnce } from '../storage';
import { jsonFormat, RecordStore } from '../storage';
import { StorageBudget } from '../storage';

export interface CertificateMetadata {
  projectId: number;
  environmentId: string;
  /** From the certificate itself (certificateVerification): SHA-1 thumbprint, notAfter, notBefore, names. */
  thumbprint: string;
  expiresAt: string;
  notBefore: string;
  subject: string;
  issuer: string;
  /** The answer's expiry fields, as the service gave them; informative only. */
  serviceSaid: { expirationDateTimeUtc?: string; expirationIsoDateTimeUtc?: string };
  filename: string;
  files: { name: string; bytes: number }[];
  fetchedAt: string;
  /** What asked for it: the timer, the refresh route. */
  fetchedBy: string;
  operationActivityId?: string;
  /**
   * The bundle's folder under the environment's: the thumbprint and a fetch id, so that the
   * same certificate downloaded again (with a new password) never writes over the current
   * bundle. Absent in records written before; their folder is the thumbprint alone.
   */
  bundle?: string;
}

/** The folder a record's zip, metadata and secret are under. */
export function bundleFolderOf(metadata: Pick<CertificateMetadata, 'thumbprint' | 'bundle'>): string {
  return metadata.bundle ?? metadata.thumbprint;
}

export interface AttemptRecord {
  at: string;
  outcome: 'downloaded' | 'fresh' | 'rate-limited' | 'failed';
  trigger: string;
  thumbprint?: string;
  retryAt?: string;
  error?: { code: string; message: string };
}

export interface EnvironmentRecord {
  current?: CertificateMetadata;
  lastAttempt?: AttemptRecord;
  /** Thumbprints of the bundles kept, newest first. */
  kept: string[];
}

/** The blob metadata on a bundle's metadata.json naming the pointer version its save replaces ('' when there was none). */
const basedOnKey = 'basedon';

/** A delete of what is already gone has nothing left to do. */
function ignoreMissing(error: unknown): undefined {
  if (statusCodeOf(error) === 404) return undefined;
  throw error;
}

export class CertificateStore {
  readonly #budget: StorageBudget;
  /** Creates both containers, once; private: no public access level is given. */
  readonly #ensureReady: () => Promise<void>;
  /** The JSON records of the bundles' container: each bundle's metadata.json, an environment's current.json and last-attempt.json. */
  readonly #records: RecordStore<unknown>;

  constructor(
    private readonly bundles: ContainerClient,
    private readonly secrets: ContainerClient,
    private readonly keepBundles: number,
    storageTimeoutMs = 10_000,
  ) {
    this.#budget = new StorageBudget(storageTimeoutMs, 'Certificate storage');
    this.#ensureReady = containerMadeOnce([bundles, secrets], this.#budget, 'create its containers');
    // Made by #ensureReady, which every method calls first.
    this.#records = new RecordStore({ container: bundles, budget: this.#budget, format: jsonFormat(2) });
  }

  #folder(projectId: number, environmentId: string): string {
    return `${projectId}/${environmentId.toLowerCase()}`;
  }

  async #readJson<T>(name: string): Promise<{ value: T; etag?: string } | undefined> {
    return (await this.#records.read(name)) as { value: T; etag: string } | undefined;
  }

  async read(projectId: number, environmentId: string): Promise<EnvironmentRecord> {
    await this.#ensureReady();
    const [status, kept] = await Promise.all([this.readStatus(projectId, environmentId), this.#keptBundles(this.#folder(projectId, environmentId))]);
    // A bundle without its zip is a save in flight or one that failed: not kept.
    return { ...status, kept: kept.filter((bundle) => bundle.complete).map((bundle) => bundle.thumbprint) };
  }

  /** The current certificate and the last attempt only: two reads, no listing (what `health` needs). */
  async readStatus(projectId: number, environmentId: string): Promise<Pick<EnvironmentRecord, 'current' | 'lastAttempt'>> {
    await this.#ensureReady();
    const folder = this.#folder(projectId, environmentId);
    const [current, lastAttempt] = await Promise.all([
      this.#readJson<CertificateMetadata>(`${folder}/current.json`),
      this.#readJson<AttemptRecord>(`${folder}/last-attempt.json`),
    ]);
    return { current: current?.value, lastAttempt: lastAttempt?.value };
  }

  /** The bundles' blobs under `prefix`, with their metadata, each listing page within the budget. */
  async *#blobsUnder(prefix: string) {
    const pages = this.#budget.pages('list bundles', (abortSignal) =>
      this.bundles.listBlobsFlat({ prefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: 1000 }),
    );
    for await (const page of pages) yield* page.segment.blobItems;
  }

  /**
   * The bundles stored (their folder, the thumbprint it starts with, the pointer's ETag its
   * save read: see #pruneOldBundles, and its files besides metadata.json: with its zip it is
   * complete, see save), newest first.
   */
  async #keptBundles(folder: string): Promise<{ bundle: string; thumbprint: string; basedOn?: string; files: string[]; complete: boolean }[]> {
    const found = new Map<string, { bundle: string; thumbprint: string; basedOn?: string; at: number }>();
    const filesOf = new Map<string, string[]>();
    for await (const blob of this.#blobsUnder(`${folder}/`)) {
      const match = new RegExp(`^${folder}/(([^/-]+)[^/]*)/(.+)$`).exec(blob.name);
      if (!match) continue;
      const [, bundle, thumbprint, file] = match as unknown as [string, string, string, string];
      if (file === 'metadata.json')
        found.set(bundle, { bundle, thumbprint, basedOn: blob.metadata?.[basedOnKey], at: blob.properties.createdOn?.getTime() ?? 0 });
      else filesOf.set(bundle, [...(filesOf.get(bundle) ?? []), file]);
    }
    return [...found.values()]
      .map((bundle) => {
        const files = filesOf.get(bundle.bundle) ?? [];
        return { ...bundle, files, complete: files.length > 0 };
      })
      .sort((a, b) => b.at - a.at);
  }

  /**
   * Writes the bundle's metadata, its secret and its zip, then points `current.json` at it. The
   * pointer is replaced with the ETag it was read with, so a concurrent save cannot be lost.
   * Each save writes a folder of its own, never the current one, even for the same certificate.
   *
   * metadata.json goes first so that every bundle begun is listed, and pruning removes whatever
   * of it a failed save left (a secret above all); the zip goes after the secret, so a bundle
   * whose zip is listed is complete; the pointer goes last, so no reader sees a bundle as
   * current before its zip and secret exist.
   */
  async save(fetched: CertificateMetadata, zip: Buffer, secret: string): Promise<void> {
    await this.#ensureReady();
    // Thumbprints are alphanumeric (the refresher checks), so the first '-' ends the thumbprint.
    const bundle = `${fetched.thumbprint}-${randomBytes(6).toString('hex')}`;
    const metadata: CertificateMetadata = { ...fetched, bundle };
    const folder = this.#folder(metadata.projectId, metadata.environmentId);
    const bundleFolder = `${folder}/${bundle}`;
    const previous = await this.#readJson<CertificateMetadata>(`${folder}/current.json`);
    const unchanged = ' (the current certificate is unchanged)';
    // The pointer's version this save will replace, kept with the bundle for pruning to read.
    await this.#records.write(`${bundleFolder}/metadata.json`, metadata, { metadata: { [basedOnKey]: previous?.etag ?? '' } });
    await this.#budget.call(`write the secret${unchanged}`, (abortSignal) =>
      this.secrets.getBlockBlobClient(`${bundleFolder}/secret`).upload(secret, Buffer.byteLength(secret), { abortSignal }),
    );
    await this.#budget.call(`write the bundle${unchanged}`, (abortSignal) =>
      this.bundles
        .getBlockBlobClient(`${bundleFolder}/${metadata.filename}`)
        .uploadData(zip, { abortSignal, blobHTTPHeaders: { blobContentType: 'application/zip' } }),
    );
    const pointer = `${folder}/current.json`;
    if ((previous?.etag ? await this.#records.replace(pointer, metadata, previous.etag) : await this.#records.create(pointer, metadata)) === undefined) {
      // This bundle can never become current. A concurrent pruning may have removed its
      // metadata.json already (its save had replaced the pointer), so nothing else would
      // remove what this save wrote after; if this removal fails, metadata.json (removed
      // last) still lists it for the next pruning.
      await this.#removeBundle(folder, bundle, [metadata.filename]).catch(() => undefined);
      throw new GatewayError('Conflict', 'Another instance made a certificate current at the same moment; the newer one stays.');
    }
    // The new bundle is current: the save has done what it is for, and a pruning that fails is
    // left to the next save (metadata.json, removed last, still lists what it did not finish).
    // Failing the save here would tell the refresher its certificate was not stored.
    await this.#pruneOldBundles(folder, bundle).catch(() => undefined);
  }

  /**
   * Keeps the newest `keepBundles` complete bundles, and never removes the current one, the one
   * this save (`ownBundle`) just made current, nor one that a save still in flight may yet make
   * current. No clock decides that (a grace period would trust how long a save takes; creation
   * times, the clocks of storage's servers), only the pointer's ETag, which never repeats:
   *
   * A save makes its bundle current by replacing `current.json` on condition of the ETag it
   * read before writing the bundle, kept as `basedon` on the bundle's metadata.json. The
   * listing here is taken first and the pointer read after it, so a listed bundle's save read
   * the pointer before that read. If its replacement is still to succeed, the pointer has not
   * changed since the save read it, so the ETag read here is its `basedon`: spared. For any
   * other listed bundle, the pointer changed after its save read it: that save's condition can
   * no longer hold (it failed, or will), or it held already and the bundle is current (spared)
   * or was replaced since. Either way no save can point at it again, so one left incomplete (no
   * zip: its save failed) is removed whatever the count. A bundle written after the listing is
   * not in it. Records written before `basedon` have none: they were never pending.
   *
   * If the pointer this save has just written reads as missing (or without an ETag), storage
   * cannot be trusted at this moment to say what is current: nothing is pruned; the next save prunes.
   */
  async #pruneOldBundles(folder: string, ownBundle: string): Promise<void> {
    const kept = await this.#keptBundles(folder);
    const pointer = await this.#readJson<CertificateMetadata>(`${folder}/current.json`);
    if (!pointer?.etag) return;
    const currentBundle = bundleFolderOf(pointer.value);
    const removable = kept.filter(({ bundle, basedOn }) => bundle !== currentBundle && bundle !== ownBundle && basedOn !== pointer.etag);
    const incomplete = removable.filter(({ complete }) => !complete);
    const surplus = removable.filter(({ complete }) => complete).slice(Math.max(0, this.keepBundles - 1));
    for (const { bundle, files } of [...incomplete, ...surplus]) await this.#removeBundle(folder, bundle, files);
  }

  /**
   * Removes a bundle: its secret first, then its zip, and its metadata.json last, so that a
   * failure (which propagates, ending the removal) leaves it listed for the next pruning to
   * finish. What is already gone (a failed save never wrote it, a concurrent pruning removed it) is skipped.
   * `files` are its files besides metadata.json, as listed by the pruning or known to its own save:
   * a save whose bundle is doomed while it writes removes what it wrote itself (see save).
   */
  async #removeBundle(folder: string, bundle: string, files: readonly string[]): Promise<void> {
    const bundleFolder = `${folder}/${bundle}`;
    await this.#budget.call('remove an old secret', (abortSignal) => this.secrets.deleteBlob(`${bundleFolder}/secret`, { abortSignal }).catch(ignoreMissing));
    for (const file of [...files, 'metadata.json']) {
      await this.#budget.call('remove an old bundle', (abortSignal) =>
        this.bundles.deleteBlob(`${bundleFolder}/${file}`, { abortSignal }).catch(ignoreMissing),
      );
    }
  }

  async recordAttempt(projectId: number, environmentId: string, attempt: AttemptRecord): Promise<void> {
    await this.#ensureReady();
    // The record of an attempt is best effort: failing to write it must not hide the attempt's outcome.
    await this.#records.write(`${this.#folder(projectId, environmentId)}/last-attempt.json`, attempt).catch(() => undefined);
  }
}
