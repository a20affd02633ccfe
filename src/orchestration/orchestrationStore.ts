/**
 * Orchestration documents in blob storage, one JSON blob each (`instances/{id}.json`), written
 * only with ETag conditions so two instances never both advance one, and never lose an update.
 * Blob metadata repeats what a listing needs (name, status, times), so
 * the list and purge routes never download a document to filter it, and what a waiting
 * caller's watch needs (status, poll times, last read status), so a HEAD answers it without
 * the input (which may be megabytes). Which orchestrations need
 * the poller is kept apart, in the index (orchestrationIndex.ts). Every call runs within the
 * storage budget (`STORAGE_TIMEOUT_MS`).
 */
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { isScopeAllowed } from '../http/scopeGuard';
import { downloadText, statusCodeOf } from '../storage/blobText';
import type { StorageBudget } from '../storage/storageBudget';
import { nextDeliveryAt } from './outbox';
import type { OrchestrationState, RuntimeStatus } from './orchestrationState';

export interface StoredState {
  state: OrchestrationState;
  etag: string;
}

/** A version written: its ETag, and the length of its JSON text (what keeping it in memory costs). */
export interface WrittenVersion {
  etag: string;
  bytes: number;
}

/** What a listing knows of an orchestration without reading its document. */
export interface OrchestrationSummary {
  id: string;
  name: string;
  runtimeStatus: RuntimeStatus;
  createdTime: string;
  lastUpdatedTime: string;
  endedTime?: string;
  /** For the janitor: the request key an active one holds, and when a delivery is next due. */
  requestKey?: string;
  nextDeliveryAt?: number;
  startedBy?: string;
  /** The upstream path it acts on (its scope), for a caller with `admin` in some scopes only. */
  target?: string;
  /** The stored document's size: what reading it (for its input) costs. */
  documentBytes: number;
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

export interface SummaryFilter {
  statuses?: readonly RuntimeStatus[];
  /** Operation ids (the catalogue's `operationId`). */
  names?: readonly string[];
  createdFrom?: string;
  createdTo?: string;
  /** A prefix of the id: read straight from the listing's own prefix. */
  idPrefix?: string;
  /**
   * Only what one caller may see, for a caller without `admin` everywhere: those it started, and
   * those whose target lies in one of `adminScopes`, where it has `admin`.
   */
  visibleTo?: { startedBy: string; adminScopes?: readonly string[] };
}

export interface SummaryQuery extends SummaryFilter {
  /** Most entries answered. */
  top: number;
  /** Most stored documents looked at to answer, and the time that may take (ms). */
  maxScanned: number;
  timeBudgetMs: number;
  /** Where the previous answer stopped (see `QueryCursor`). */
  continuationToken?: string;
  /**
   * For a caller that will read the answered documents (for their inputs): the answer ends
   * before the entry whose document would take their sizes in all past this, the first entry
   * excepted, so every answer moves on.
   */
  maxDocumentBytes?: number;
}

export interface SummaryPage {
  summaries: OrchestrationSummary[];
  /** Set when more may follow: pass it back to read on. */
  continuationToken?: string;
}

const instancePrefix = 'instances/';
/** Blobs per listing call: the service's own maximum. */
const listPageSize = 5000;

/**
 * Where a query stopped: the storage listing's marker of the page it was reading, and the last
 * document answered from it, so an answer that ends mid-page resumes after that document.
 */
interface QueryCursor {
  marker?: string;
  after?: string;
}

export function encodeCursor(cursor: QueryCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

/**
 * What a cursor's texts may hold: a listing marker (opaque, printable ASCII at the service and
 * in Azurite) and a blob name the store wrote. Anything else (a lone surrogate, a control
 * character) could not have come from a previous answer, and reaching storage it fails the
 * request's encoding or stalls the service: a fake outage instead of a plain refusal.
 */
const cursorText = /^[\x20-\x7e]*$/;

/** The cursor of a continuation token, or undefined for anything a previous answer could not have given. */
export function cursorOf(token: string): QueryCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(token)) return undefined;
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof cursor !== 'object' || cursor === null || Array.isArray(cursor)) return undefined;
  const { marker, after } = cursor as Record<string, unknown>;
  const isText = (value: unknown, max: number) => value === undefined || (typeof value === 'string' && value.length <= max && cursorText.test(value));
  return isText(marker, 2048) && isText(after, 256) ? { marker: marker as string | undefined, after: after as string | undefined } : undefined;
}

export const invalidContinuationMessage = 'x-ms-continuation-token must be the token a previous answer gave; send none to start from the beginning.';

/** The cursor of a continuation token, or a 400 for anything a previous answer could not have given. */
export function decodeCursor(token: string): QueryCursor {
  const cursor = cursorOf(token);
  if (!cursor) throw new GatewayError('InvalidRequest', invalidContinuationMessage, { target: 'x-ms-continuation-token' });
  return cursor;
}

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

export function matchesFilter(summary: OrchestrationSummary, filter: SummaryFilter): boolean {
  if (filter.statuses && !filter.statuses.includes(summary.runtimeStatus)) return false;
  if (filter.names && !filter.names.includes(summary.name)) return false;
  if (filter.createdFrom && summary.createdTime < filter.createdFrom) return false;
  if (filter.createdTo && summary.createdTime > filter.createdTo) return false;
  if (filter.visibleTo && !isVisibleTo(summary, filter.visibleTo)) return false;
  return true;
}

function isVisibleTo(summary: OrchestrationSummary, caller: NonNullable<SummaryFilter['visibleTo']>): boolean {
  if (summary.startedBy === caller.startedBy) return true;
  return caller.adminScopes !== undefined && summary.target !== undefined && isScopeAllowed(summary.target, caller.adminScopes);
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
  #ready: Promise<unknown> | undefined;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
  ) {}

  /** Creates the container once per process. */
  ensureReady(): Promise<unknown> {
    this.#ready ??= this.budget.call('create its container', (abortSignal) => this.container.createIfNotExists({ abortSignal })).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
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
    return this.budget.call('read an orchestration\'s status', async (abortSignal) => {
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
