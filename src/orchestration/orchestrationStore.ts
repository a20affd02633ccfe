/**
 * Orchestration documents in blob storage, one JSON blob each, written only with ETag
 * conditions so two instances never both advance one, and never lose an update (DESIGN.md
 * section 4). Blob metadata repeats the few fields a listing needs (status, next poll), so the
 * poller finds due work without downloading every document.
 *
 * Layout of the container: `instances/{id}.json`, and `keys/{requestKey}` holding the id of
 * the orchestration that owns a request key (a duplicate start finds it there).
 */
import type { ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { downloadText, isConditionFailure } from '../storage/blobText';
import type { OrchestrationState, RuntimeStatus } from './orchestrationState';

export interface StoredState {
  state: OrchestrationState;
  etag: string;
}

export interface OrchestrationSummary {
  id: string;
  runtimeStatus: RuntimeStatus;
  nextPollAt?: number;
  lastUpdatedTime: string;
}

const instancePrefix = 'instances/';
const keyPrefix = 'keys/';

/** A storage call whose failure the caller should see as 503, not as a crash. */
async function storage<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new GatewayError('StorageUnavailable', `Orchestration storage failed to ${what}.`, { cause: error });
  }
}

/** Runs a conditional write; false when the condition failed (someone else wrote first). */
async function conditional(what: string, write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw new GatewayError('StorageUnavailable', `Orchestration storage failed to ${what}.`, { cause: error });
  }
}

export class OrchestrationStore {
  #ready: Promise<unknown> | undefined;

  constructor(private readonly container: ContainerClient) {}

  /** Creates the container once per process. */
  ensureReady(): Promise<unknown> {
    this.#ready ??= storage('create its container', () => this.container.createIfNotExists()).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  #instance(id: string) {
    return this.container.getBlockBlobClient(`${instancePrefix}${id}.json`);
  }

  #write(state: OrchestrationState, conditions: { ifMatch?: string; ifNoneMatch?: string }) {
    const text = JSON.stringify(state);
    return this.#instance(state.id).upload(text, Buffer.byteLength(text), {
      conditions,
      blobHTTPHeaders: { blobContentType: 'application/json' },
      metadata: {
        runtimestatus: state.runtimeStatus,
        nextpollat: String(state.poll?.nextPollAt ?? ''),
        lastupdatedtime: state.lastUpdatedTime,
      },
    });
  }

  /** Writes a new document; false if the id exists. */
  async create(state: OrchestrationState): Promise<boolean> {
    await this.ensureReady();
    return conditional('create an orchestration', () => this.#write(state, { ifNoneMatch: '*' }));
  }

  async read(id: string): Promise<StoredState | undefined> {
    await this.ensureReady();
    return storage('read an orchestration', async () => {
      const blob = await downloadText(this.#instance(id));
      return blob && { state: JSON.parse(blob.text) as OrchestrationState, etag: blob.etag };
    });
  }

  /** Replaces the document if it is still at `etag`; false when another instance wrote first. */
  async replace(state: OrchestrationState, etag: string): Promise<boolean> {
    return conditional('update an orchestration', () => this.#write(state, { ifMatch: etag }));
  }

  async delete(id: string): Promise<void> {
    await storage('delete an orchestration', () => this.#instance(id).deleteIfExists());
  }

  async list(): Promise<OrchestrationSummary[]> {
    await this.ensureReady();
    return storage('list orchestrations', async () => {
      const summaries: OrchestrationSummary[] = [];
      for await (const blob of this.container.listBlobsFlat({ prefix: instancePrefix, includeMetadata: true })) {
        const metadata = blob.metadata ?? {};
        summaries.push({
          id: blob.name.slice(instancePrefix.length, -'.json'.length),
          runtimeStatus: (metadata.runtimestatus ?? 'Pending') as RuntimeStatus,
          nextPollAt: metadata.nextpollat ? Number(metadata.nextpollat) : undefined,
          lastUpdatedTime: metadata.lastupdatedtime ?? '',
        });
      }
      return summaries;
    });
  }

  #key(requestKey: string) {
    return this.container.getBlockBlobClient(`${keyPrefix}${requestKey}`);
  }

  /** Takes a request key for `id`; false if another orchestration holds it. */
  async claimKey(requestKey: string, id: string): Promise<boolean> {
    await this.ensureReady();
    return conditional('claim a request key', () => this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifNoneMatch: '*' } }));
  }

  /** Who holds a request key, with the ETag to take it over. */
  async keyHolder(requestKey: string): Promise<{ id: string; etag: string } | undefined> {
    return storage('read a request key', async () => {
      const blob = await downloadText(this.#key(requestKey));
      return blob && { id: blob.text, etag: blob.etag };
    });
  }

  /** Moves a request key held by a finished orchestration to `id`; false if it changed meanwhile. */
  async takeOverKey(requestKey: string, id: string, etag: string): Promise<boolean> {
    return conditional('take over a request key', () => this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifMatch: etag } }));
  }

  /** Frees a request key if `id` still holds it. */
  async releaseKey(requestKey: string, id: string): Promise<void> {
    const holder = await this.keyHolder(requestKey);
    if (holder?.id === id) await conditional('release a request key', () => this.#key(requestKey).delete({ conditions: { ifMatch: holder.etag } }));
  }
}
