/**
 * Certificate bundles in blob storage (DESIGN.md section 5). A bundle is written completely
 * under `{projectId}/{environmentId}/{thumbprint}/` (zip and metadata in one private
 * container, the secret in another), and only then made current by replacing the
 * environment's `current.json`. A failure at any step leaves the current certificate as it was.
 */
import type { ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { downloadText, isConditionFailure } from '../storage/blobText';

export interface CertificateMetadata {
  projectId: number;
  environmentId: string;
  thumbprint: string;
  expiresAt: string;
  filename: string;
  files: { name: string; bytes: number }[];
  fetchedAt: string;
  /** What asked for it: the timer, the refresh route. */
  fetchedBy: string;
  operationActivityId?: string;
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

export class CertificateStore {
  #ready: Promise<unknown> | undefined;

  constructor(
    private readonly bundles: ContainerClient,
    private readonly secrets: ContainerClient,
    private readonly keepBundles: number,
  ) {}

  async #ensureReady(): Promise<void> {
    // Containers are created private: no public access level is given.
    this.#ready ??= Promise.all([this.bundles.createIfNotExists(), this.secrets.createIfNotExists()]).catch((error: unknown) => {
      this.#ready = undefined;
      throw new GatewayError('StorageUnavailable', 'Certificate storage could not be prepared.', { cause: error });
    });
    await this.#ready;
  }

  #folder(projectId: number, environmentId: string): string {
    return `${projectId}/${environmentId.toLowerCase()}`;
  }

  async #readJson<T>(name: string): Promise<{ value: T; etag?: string } | undefined> {
    try {
      const blob = await downloadText(this.bundles.getBlockBlobClient(name));
      return blob && { value: JSON.parse(blob.text) as T, etag: blob.etag };
    } catch (error) {
      throw new GatewayError('StorageUnavailable', 'Certificate storage could not be read.', { cause: error });
    }
  }

  async #writeJson(name: string, value: unknown, conditions?: { ifMatch?: string; ifNoneMatch?: string }): Promise<void> {
    const text = JSON.stringify(value, null, 2);
    await this.bundles.getBlockBlobClient(name).upload(text, Buffer.byteLength(text), { conditions, blobHTTPHeaders: { blobContentType: 'application/json' } });
  }

  async read(projectId: number, environmentId: string): Promise<EnvironmentRecord> {
    await this.#ensureReady();
    const folder = this.#folder(projectId, environmentId);
    const [current, lastAttempt, kept] = await Promise.all([
      this.#readJson<CertificateMetadata>(`${folder}/current.json`),
      this.#readJson<AttemptRecord>(`${folder}/last-attempt.json`),
      this.#keptThumbprints(folder),
    ]);
    return { current: current?.value, lastAttempt: lastAttempt?.value, kept };
  }

  async #keptThumbprints(folder: string): Promise<string[]> {
    const found: { thumbprint: string; at: number }[] = [];
    for await (const blob of this.bundles.listBlobsFlat({ prefix: `${folder}/` })) {
      const match = new RegExp(`^${folder}/([^/]+)/metadata\\.json$`).exec(blob.name);
      if (match) found.push({ thumbprint: match[1]!, at: blob.properties.createdOn?.getTime() ?? 0 });
    }
    return found.sort((a, b) => b.at - a.at).map((entry) => entry.thumbprint);
  }

  /**
   * Writes the bundle, its secret and its metadata, then points `current.json` at it. The
   * pointer is replaced with the ETag it was read with, so a concurrent save cannot be lost.
   */
  async save(metadata: CertificateMetadata, zip: Buffer, secret: string): Promise<void> {
    await this.#ensureReady();
    const folder = this.#folder(metadata.projectId, metadata.environmentId);
    const bundleFolder = `${folder}/${metadata.thumbprint}`;
    const previous = await this.#readJson<CertificateMetadata>(`${folder}/current.json`);
    try {
      await this.bundles.getBlockBlobClient(`${bundleFolder}/${metadata.filename}`).uploadData(zip, { blobHTTPHeaders: { blobContentType: 'application/zip' } });
      await this.secrets.getBlockBlobClient(`${bundleFolder}/secret`).upload(secret, Buffer.byteLength(secret));
      await this.#writeJson(`${bundleFolder}/metadata.json`, metadata);
      await this.#writeJson(`${folder}/current.json`, metadata, previous?.etag ? { ifMatch: previous.etag } : { ifNoneMatch: '*' });
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new GatewayError('Conflict', 'Another instance made a certificate current at the same moment; the newer one stays.', { cause: error });
      }
      throw new GatewayError('StorageUnavailable', 'The certificate bundle could not be written; the current certificate is unchanged.', { cause: error });
    }
    await this.#pruneOldBundles(folder, metadata.thumbprint);
  }

  /** Keeps the newest `keepBundles` bundles; the current one is never removed. */
  async #pruneOldBundles(folder: string, currentThumbprint: string): Promise<void> {
    const kept = await this.#keptThumbprints(folder);
    const surplus = kept.filter((thumbprint) => thumbprint !== currentThumbprint).slice(Math.max(0, this.keepBundles - 1));
    for (const thumbprint of surplus) {
      for await (const blob of this.bundles.listBlobsFlat({ prefix: `${folder}/${thumbprint}/` })) await this.bundles.deleteBlob(blob.name);
      await this.secrets.deleteBlob(`${folder}/${thumbprint}/secret`).catch(() => undefined);
    }
  }

  async recordAttempt(projectId: number, environmentId: string, attempt: AttemptRecord): Promise<void> {
    await this.#ensureReady();
    await this.#writeJson(`${this.#folder(projectId, environmentId)}/last-attempt.json`, attempt).catch(() => undefined);
  }
}
