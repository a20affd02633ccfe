/**
 * What a listing of orchestrations answers, in terms of what blob metadata holds (the store's
 * summaries): which of them a filter keeps, what one caller may see, and the continuation token
 * that says where the next answer reads on. Rules only: the listing itself is the store's
 * (orchestrationStore.ts).
 */
import { GatewayError } from '../errors';
import { isScopeAllowed } from '../rules';
import type { RuntimeStatus } from './orchestrationState';

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

/**
 * Where a query stopped: the storage listing's marker of the page it was reading, and the last
 * document answered from it, so an answer that ends mid-page resumes after that document.
 */
export interface QueryCursor {
  marker?: string;
  after?: string;
  /**
   * A bulk action's: when its first batch was read. Later batches act only on what was created
   * by then, so what the action itself started (a restart) is never acted on again.
   */
  asOf?: string;
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
/** A time as `toISOString` writes it: all an `asOf` may be. */
const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

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
  const { marker, after, asOf } = cursor as Record<string, unknown>;
  const isText = (value: unknown, max: number) => value === undefined || (typeof value === 'string' && value.length <= max && cursorText.test(value));
  if (asOf !== undefined && (typeof asOf !== 'string' || !isoTime.test(asOf))) return undefined;
  if (!isText(marker, 2048) || !isText(after, 256)) return undefined;
  return { marker: marker as string | undefined, after: after as string | undefined, ...(asOf === undefined ? {} : { asOf }) };
}

export const invalidContinuationMessage = 'x-ms-continuation-token must be the token a previous answer gave; send none to start from the beginning.';

/** The cursor of a continuation token, or a 400 for anything a previous answer could not have given. */
export function decodeCursor(token: string): QueryCursor {
  const cursor = cursorOf(token);
  if (!cursor) throw new GatewayError('InvalidRequest', invalidContinuationMessage, { target: 'x-ms-continuation-token' });
  return cursor;
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
