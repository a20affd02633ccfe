/**
 * Orchestration documents in blob storage, one JSON blob each (`instances/{id}.json`), written
 * only with ETag conditions so two instances never both advance one, and never lose an update.
 * Blob metadata repeats what a listing needs (name, status, times), so
 * the list and purge routes never download a document to filter it, and what a waiting
 * caller's watch needs (status, poll times, last read status), so a HEAD answers it without
 * the input (which may be megabytes). Which orchestrations need
 * the poller is kept apart, in the index (orchestrationIndex.ts); what a listing answers (its
 * filters, what a caller may see, continuation tokens), in summaryQuery.ts. Every call runs
 * within the storage budget (`STORAGE_TIMEOUT_MS`).
 */
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { downloadText, statusCodeOf } from '../storage';
import { containerMadeOnce } from '../storage';
import type { StorageBudget } from '../storage';
import { nextDeliveryAt } from './outbox';
import type { OrchestrationState, RuntimeStatus } from './orchestrationState';
import { decodeCursor, encodeCursor, matchesFilter, type OrchestrationSummary, type QueryCursor, type SummaryPage, type SummaryQuery } from './summaryQuery';

export interface StoredState {
  state: OrchestrationState;
  etag: string;
}

/** A version written: its ETag, and the length of its JSON text (what keeping it in memory costs). */
export interface WrittenVersion {
  etag: string;
  bytes: number;
}

/**
 * What a HEAD of a document tells: its version and where it stands. The poll fields are absent
 * on documents written before they were kept in metadata (a watch then treats a poll as due).
 */
export interface StoredStatus {
  etag: string;
  runtimeStatus: RuntimeStatus;
  nextPollAt?: number;
  claimedUntil?: number;
  deadlineAt?: number;
  lastReadStatus?: number;
  startedBy?: string;
  /** The upstream path it acts on (its scope); absent when too long for metadata. */
  target?: string;
  /** When a notification still pending is next attempted; absent when none is pending. */
  nextDeliveryAt?: number;
}

const instancePrefix = 'instances/';
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
    endedTime: metadata.endedtime || undefined,
    requestKey: metadata.requestkey || undefined,
    nextDeliveryAt: optionalNumber(metadata.nextdeliveryat),
    startedBy: metadata.startedby || undefined,
    target: targetOf(metadata.target),
    documentBytes: blob.properties.contentLength ?? 0,
  };
}

/**
 * The target as blob metadata holds it: ASCII (encodeURI, undone by decodeURI), and within the
 * 8 KiB the service allows all of a blob's metadata. One that cannot be kept (too long, or not
 * well-formed text) is left out, never failing the write: the orchestration is then listed only
 * to its starter and to callers with `admin` everywhere (its id still reads it from the document).
 */
const maxTargetMetadata = 4096;
function targetMetadata(path: string): string {
  try {
    const encoded = encodeURI(path);
    return encoded.length <= maxTargetMetadata ? encoded : '';
  } catch {
    return '';
  }
}

function targetOf(metadata: string | undefined): string | undefined {
  try {
    return metadata ? decodeURI(metadata) : undefined;
  } catch {
    return undefined;
  }
}

export class OrchestrationStore {
  /** Creates the container once per process. */
  readonly ensureReady: () => Promise<void>;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
  ) {
    this.ensureReady = containerMadeOnce(container, budget);
  }

  #instance(id: string) {
    return this.container.getBlockBlobClient(`${instancePrefix}${id}.json`);
  }

  async #write(state: OrchestrationState, conditions: { ifMatch?: string; ifNoneMatch?: string }, what: string): Promise<WrittenVersion | undefined> {
    const text = JSON.stringify(state);
    const written = await this.budget.conditional(what, (abortSignal) =>
      this.#instance(state.id).upload(text, Buffer.byteLength(text), {
        conditions,
        abortSignal,
        blobHTTPHeaders: { blobContentType: 'application/json' },
        metadata: {
          name: state.name,
          runtimestatus: state.runtimeStatus,
          createdtime: state.createdTime,
          lastupdatedtime: state.lastUpdatedTime,
          endedtime: state.endedTime ?? '',
          requestkey: state.requestKey,
          nextdeliveryat: String(nextDeliveryAt(state.deliveries) ?? ''),
          startedby: state.startedBy ?? '',
          target: targetMetadata(state.input.path),
          nextpollat: String(state.poll?.nextPollAt ?? ''),
          claimeduntil: String(state.poll?.claimedUntil ?? ''),
          deadlineat: String(state.poll?.deadlineAt ?? ''),
          lastreadstatus: String(state.customStatus?.lastReadStatus ?? ''),
        },
      }),
    );
    return written && { etag: written.etag ?? '', bytes: text.length };
  }

  /** Writes a new document; its ETag, or undefined if the id exists. */
  async create(state: OrchestrationState): Promise<string | undefined> {
    await this.ensureReady();
    return (await this.#write(state, { ifNoneMatch: '*' }, 'create an orchestration'))?.etag;
  }

  async read(id: string): Promise<StoredState | undefined> {
    await this.ensureReady();
    return this.budget.call('read an orchestration', async (abortSignal) => {
      const blob = await downloadText(this.#instance(id), abortSignal);
      return blob && { state: JSON.parse(blob.text) as OrchestrationState, etag: blob.etag };
    });
  }

  /** The document's version and status from its properties alone (a HEAD: the body is not read); undefined if there is none. */
  async readStatus(id: string): Promise<StoredStatus | undefined> {
    await this.ensureReady();
    return this.budget.call("read an orchestration's status", async (abortSignal) => {
      try {
        const properties = await this.#instance(id).getProperties({ abortSignal });
        const metadata = properties.metadata ?? {};
        return {
          etag: properties.etag ?? '',
          runtimeStatus: (metadata.runtimestatus ?? 'Pending') as RuntimeStatus,
          nextPollAt: optionalNumber(metadata.nextpollat),
          claimedUntil: optionalNumber(metadata.claimeduntil),
          deadlineAt: optionalNumber(metadata.deadlineat),
          lastReadStatus: optionalNumber(metadata.lastreadstatus),
          startedBy: metadata.startedby || undefined,
          target: targetOf(metadata.target),
          nextDeliveryAt: optionalNumber(metadata.nextdeliveryat),
        };
      } catch (error) {
        if (statusCodeOf(error) === 404) return undefined;
        throw error;
      }
    });
  }

  /** Replaces the document if it is still at `etag`: the new version, or undefined when another instance wrote first. */
  replace(state: OrchestrationState, etag: string): Promise<WrittenVersion | undefined> {
    return this.#write(state, { ifMatch: etag }, 'update an orchestration');
  }

  async delete(id: string): Promise<void> {
    await this.budget.call('delete an orchestration', (abortSignal) => this.#instance(id).deleteIfExists({ abortSignal }));
  }

  /** One page of the listing, from `marker`: for the janitor, which walks every document in turn. */
  async listPage(marker: string | undefined, pageSize: number): Promise<{ summaries: OrchestrationSummary[]; marker?: string }> {
    await this.ensureReady();
    const pages = this.budget.pages('list orchestrations', (abortSignal) =>
      this.container.listBlobsFlat({ prefix: instancePrefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: pageSize, continuationToken: marker }),
    );
    for await (const page of pages) return { summaries: page.segment.blobItems.map(summaryOf), marker: page.continuationToken || undefined };
    return { summaries: [] };
  }

  /**
   * One page of summaries matching `query`, in id order: at most `top` entries, read from
   * growing listing pages (a narrow filter costs few storage calls, not one per document), at most
   * `maxScanned` documents and `timeBudgetMs` in all, so the answer stays small and quick
   * whatever is stored; a continuation token says where to read on, mid-page if need be.
   */
  async query(query: SummaryQuery, now: () => number = Date.now): Promise<SummaryPage> {
    await this.ensureReady();
    const startedAt = now();
    const summaries: OrchestrationSummary[] = [];
    const prefix = `${instancePrefix}${query.idPrefix ?? ''}`;
    const cursor: QueryCursor = query.continuationToken ? decodeCursor(query.continuationToken) : {};
    const { after } = cursor;
    let { marker } = cursor;
    let scanned = 0;
    let documentBytes = 0;
    let lastAnswered: string | undefined;
    // Pages start at what `top` needs and double while the filter keeps missing: a dense
    // filter reads little, a sparse one needs few calls (never one per document).
    let wanted = Math.max(100, 2 * query.top);
    for (;;) {
      const pageMarker = marker;
      const pageSize = Math.min(listPageSize, wanted, query.maxScanned - scanned);
      wanted *= 2;
      const { value: page } = await this.budget
        .pages('list orchestrations', (abortSignal) =>
          this.container.listBlobsFlat({ prefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: pageSize, continuationToken: pageMarker }),
        )
        .next();
      const blobs = page?.segment.blobItems ?? [];
      scanned += blobs.length;
      for (const blob of blobs) {
        if (after !== undefined && blob.name <= after) continue;
        const summary = summaryOf(blob);
        if (!matchesFilter(summary, query)) continue;
        documentBytes += summary.documentBytes;
        if (lastAnswered !== undefined && query.maxDocumentBytes !== undefined && documentBytes > query.maxDocumentBytes) {
          return { summaries, continuationToken: encodeCursor({ marker: pageMarker, after: lastAnswered }) };
        }
        summaries.push(summary);
        lastAnswered = blob.name;
        if (summaries.length === query.top) return { summaries, continuationToken: encodeCursor({ marker: pageMarker, after: blob.name }) };
      }
      // `after` holds across pages: names come in order, and a resumed page may be read in
      // smaller pieces than it was first, so the next piece can still hold answered names.
      marker = page?.continuationToken || undefined;
      if (!marker) return { summaries };
      if (scanned >= query.maxScanned || now() - startedAt >= query.timeBudgetMs) return { summaries, continuationToken: encodeCursor({ marker }) };
    }
  }
}
