/**
 * Orchestration documents in blob storage, one JSON blob each, written only with ETag
 * conditions so two instances never both advance one, and never lose an update (DESIGN.md
 * section 4). Blob metadata repeats the few fields a listing needs (name, status, times, next
 * poll, deadline), so the poller and the list route never download a document to list it.
 * Every call runs within the storage budget (`STORAGE_TIMEOUT_MS`).
 *
 * Layout of the container: `instances/{id}.json`, and `keys/{requestKey}` holding the id of
 * the orchestration that owns a request key (a duplicate start finds it there).
 */
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { downloadText } from '../storage/blobText';
import { StorageBudget } from '../storage/storageBudget';
import type { OrchestrationState, RuntimeStatus } from './orchestrationState';

export interface StoredState {
  state: OrchestrationState;
  etag: string;
}

/** What a listing knows of an orchestration without reading its document. */
export interface OrchestrationSummary {
  id: string;
  name: string;
  runtimeStatus: RuntimeStatus;
  createdTime: string;
  lastUpdatedTime: string;
  nextPollAt?: number;
  deadlineAt?: number;
}

export interface SummaryQuery {
  statuses?: readonly RuntimeStatus[];
  /** Most entries answered. */
  top: number;
  /** Most blobs read to answer one query: a filter that matches little still answers in time. */
  maxScanned: number;
  /** Where the previous page stopped. */
  continuationToken?: string;
}

export interface SummaryPage {
  summaries: OrchestrationSummary[];
  /** Set when more may follow: pass it back to read on. */
  continuationToken?: string;
}

const instancePrefix = 'instances/';
const keyPrefix = 'keys/';
/** Blobs per listing call: the service's own maximum. */
const listPageSize = 5000;

function optionalNumber(text: string | undefined): number | undefined {
  const value = text ? Number(text) : NaN;
  return Number.isFinite(value) ? value : undefined;
}

function summaryOf(blob: BlobItem): OrchestrationSummary {
  const metadata = blob.metadata ?? {};
  return {
    id: blob.name.slice(instancePrefix.length, -'.json'.length),
    name: metadata.name ?? '',
    runtimeStatus: (metadata.runtimestatus ?? 'Pending') as RuntimeStatus,
    createdTime: metadata.createdtime ?? metadata.lastupdatedtime ?? '',
    lastUpdatedTime: metadata.lastupdatedtime ?? '',
    nextPollAt: optionalNumber(metadata.nextpollat),
    deadlineAt: optionalNumber(metadata.deadlineat),
  };
}

export class OrchestrationStore {
  #ready: Promise<unknown> | undefined;
  readonly #budget: StorageBudget;

  constructor(
    private readonly container: ContainerClient,
    storageTimeoutMs = 10_000,
  ) {
    this.#budget = new StorageBudget(storageTimeoutMs, 'Orchestration storage');
  }

  /** Creates the container once per process. */
  ensureReady(): Promise<unknown> {
    this.#ready ??= this.#budget.call('create its container', (abortSignal) => this.container.createIfNotExists({ abortSignal })).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  #instance(id: string) {
    return this.container.getBlockBlobClient(`${instancePrefix}${id}.json`);
  }

  #write(state: OrchestrationState, conditions: { ifMatch?: string; ifNoneMatch?: string }, abortSignal: AbortSignal) {
    const text = JSON.stringify(state);
    return this.#instance(state.id).upload(text, Buffer.byteLength(text), {
      conditions,
      abortSignal,
      blobHTTPHeaders: { blobContentType: 'application/json' },
      metadata: {
        name: state.name,
        runtimestatus: state.runtimeStatus,
        createdtime: state.createdTime,
        lastupdatedtime: state.lastUpdatedTime,
        nextpollat: String(state.poll?.nextPollAt ?? ''),
        deadlineat: String(state.poll?.deadlineAt ?? ''),
      },
    });
  }

  /** Writes a new document; false if the id exists. */
  async create(state: OrchestrationState): Promise<boolean> {
    await this.ensureReady();
    return this.#budget.conditional('create an orchestration', (abortSignal) => this.#write(state, { ifNoneMatch: '*' }, abortSignal));
  }

  async read(id: string): Promise<StoredState | undefined> {
    await this.ensureReady();
    return this.#budget.call('read an orchestration', async (abortSignal) => {
      const blob = await downloadText(this.#instance(id), abortSignal);
      return blob && { state: JSON.parse(blob.text) as OrchestrationState, etag: blob.etag };
    });
  }

  /** Replaces the document if it is still at `etag`; false when another instance wrote first. */
  async replace(state: OrchestrationState, etag: string): Promise<boolean> {
    return this.#budget.conditional('update an orchestration', (abortSignal) => this.#write(state, { ifMatch: etag }, abortSignal));
  }

  async delete(id: string): Promise<void> {
    await this.#budget.call('delete an orchestration', (abortSignal) => this.#instance(id).deleteIfExists({ abortSignal }));
  }

  /** Every orchestration's summary, from blob metadata alone. */
  async list(): Promise<OrchestrationSummary[]> {
    await this.ensureReady();
    const summaries: OrchestrationSummary[] = [];
    const pages = this.#budget.pages('list orchestrations', (abortSignal) =>
      this.container.listBlobsFlat({ prefix: instancePrefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: listPageSize }),
    );
    for await (const page of pages) for (const blob of page.segment.blobItems) summaries.push(summaryOf(blob));
    return summaries;
  }

  /**
   * One page of summaries matching `query`, in id order: at most `top` entries, and at most
   * `maxScanned` blobs read to find them, so the answer stays small and quick whatever is
   * stored; a continuation token says where to read on.
   */
  async query(query: SummaryQuery): Promise<SummaryPage> {
    await this.ensureReady();
    const summaries: OrchestrationSummary[] = [];
    let scanned = 0;
    let continuationToken = query.continuationToken;
    do {
      const pageSize = Math.min(listPageSize, query.top - summaries.length, query.maxScanned - scanned);
      const pages = this.#budget.pages('list orchestrations', (abortSignal) =>
        this.container.listBlobsFlat({ prefix: instancePrefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: pageSize, continuationToken }),
      );
      const { value: page } = await pages.next();
      if (!page) break;
      for (const blob of page.segment.blobItems) {
        const summary = summaryOf(blob);
        if (!query.statuses || query.statuses.includes(summary.runtimeStatus)) summaries.push(summary);
      }
      scanned += page.segment.blobItems.length;
      continuationToken = page.continuationToken || undefined;
    } while (continuationToken && summaries.length < query.top && scanned < query.maxScanned);
    return { summaries, continuationToken };
  }

  #key(requestKey: string) {
    return this.container.getBlockBlobClient(`${keyPrefix}${requestKey}`);
  }

  /** Takes a request key for `id`; false if another orchestration holds it. */
  async claimKey(requestKey: string, id: string): Promise<boolean> {
    await this.ensureReady();
    return this.#budget.conditional('claim a request key', (abortSignal) => this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifNoneMatch: '*' }, abortSignal }));
  }

  /** Who holds a request key, with the ETag to take it over. */
  async keyHolder(requestKey: string): Promise<{ id: string; etag: string } | undefined> {
    return this.#budget.call('read a request key', async (abortSignal) => {
      const blob = await downloadText(this.#key(requestKey), abortSignal);
      return blob && { id: blob.text, etag: blob.etag };
    });
  }

  /** Moves a request key held by a finished orchestration to `id`; false if it changed meanwhile. */
  async takeOverKey(requestKey: string, id: string, etag: string): Promise<boolean> {
    return this.#budget.conditional('take over a request key', (abortSignal) => this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifMatch: etag }, abortSignal }));
  }

  /** Frees a request key if `id` still holds it. */
  async releaseKey(requestKey: string, id: string): Promise<void> {
    const holder = await this.keyHolder(requestKey);
    if (holder?.id === id) await this.#budget.conditional('release a request key', (abortSignal) => this.#key(requestKey).delete({ conditions: { ifMatch: holder.etag }, abortSignal }));
  }
}
