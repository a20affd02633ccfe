/**
 * What the orchestrations view reads: the entries the filters match (from the list's metadata,
 * up to CONSOLE_HISTOGRAM_MAX_STARTS), which the table sorts and pages and the histogram counts,
 * and the document of each entry on the page shown, for its target resource and, when it failed,
 * its last upstream error. Only the documented routes, with the filters as the API takes them.
 */
import { call } from './api';
import { resourceOf, type ResourceRef } from './resource';

export const runtimeStatuses = ['Pending', 'Running', 'Completed', 'Failed', 'Terminated'] as const;
export type RuntimeStatus = (typeof runtimeStatuses)[number];

export interface Filter {
  statuses: RuntimeStatus[];
  /** `hour`, `day`, `week`, `custom` (from/to below) or `any`. */
  range: 'hour' | 'day' | 'week' | 'custom' | 'any';
  from?: string;
  to?: string;
  name: string;
  idPrefix: string;
}

/** An entry of `GET orchestrations` (its times are ISO text). */
export interface ListEntry extends Record<'id' | 'name' | 'createdTime' | 'lastUpdatedTime', string> {
  runtimeStatus: RuntimeStatus;
  endedTime?: string;
  startedBy?: string;
}

/** `GET orchestrations/{id}`: `input.path` is the target. */
export interface StatusDocument extends ListEntry {
  input?: { path?: string } | null;
  output: { status?: number; body?: unknown } | null;
  customStatus: { upstreamState?: string; lastReadStatus?: number; lastPolledTime?: string; message?: string } | null;
  failure: { code: string; message: string } | null;
  nextPollTime: string | null;
  pollCount: number;
  deadlineTime: string | null;
  notifications: {
    targetOrigin: string;
    eventId: string;
    state: string;
    attempts: number;
    nextAttemptTime: string | null;
    lastError: string | null;
    deliveredTime: string | null;
  }[];
  /** Set by a restart: the ended one this restarts, and (on that one) the restart. */
  restartedFrom?: string;
  restartedAs?: string;
}

export const isActive = (entry: ListEntry): boolean => entry.runtimeStatus === 'Pending' || entry.runtimeStatus === 'Running';

/** When it ended: absent while it runs. */
export const endOf = (entry: ListEntry): string | null => entry.endedTime ?? (isActive(entry) ? null : entry.lastUpdatedTime);

const rangeMs = { hour: 3600_000, day: 86_400_000, week: 7 * 86_400_000 };

/** The created-time window a filter means, as ISO times (either may be absent). */
function windowOf(filter: Filter, now = Date.now()): { from?: string; to?: string } {
  if (filter.range === 'any') return {};
  if (filter.range === 'custom') return { from: filter.from || undefined, to: filter.to || undefined };
  return { from: new Date(now - rangeMs[filter.range]).toISOString() };
}

function queryOf(filter: Filter, extra: Record<string, string>): string {
  const query = new URLSearchParams();
  if (filter.statuses.length > 0) query.set('runtimeStatus', filter.statuses.join(','));
  if (filter.name.trim()) query.set('name', filter.name.trim());
  if (filter.idPrefix.trim()) query.set('instanceIdPrefix', filter.idPrefix.trim());
  const { from, to } = windowOf(filter);
  if (from) query.set('createdTimeFrom', from);
  if (to) query.set('createdTimeTo', to);
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  return query.toString();
}

const tokenHeader = 'x-ms-continuation-token';
const tokenHeaders = (token: string | undefined): Record<string, string> => (token ? { [tokenHeader]: token } : {});

export const statusDocumentOf = async (id: string): Promise<StatusDocument> => (await call<StatusDocument>(`orchestrations/${encodeURIComponent(id)}`)).body;

/** The upstream's last error as the document holds it: the failure, the final error answer, or the last poll's message. */
export function lastUpstreamError(document: StatusDocument): string {
  const answerError = (document.output?.body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (answerError && (document.output?.status ?? 0) >= 400) return `${String(answerError.code ?? '')}: ${String(answerError.message ?? '')}`;
  if (document.failure) return `${document.failure.code}: ${document.failure.message}`;
  return document.customStatus?.message ?? '';
}

/** What the table shows of an entry beyond the list's metadata, read from its document. */
export interface RowDetails {
  resource?: ResourceRef;
  lastError: string;
}

/**
 * Read documents, by id, with the status they had: what the table uses of one (its target, and
 * the last upstream error once it failed) changes only with its status, so an auto-refresh reads
 * only the documents of entries new to the page or whose status moved.
 */
const readDetails = new Map<string, { status: RuntimeStatus; details: RowDetails }>();
const maxRemembered = 5000;

async function detailsOfOne(entry: ListEntry): Promise<RowDetails> {
  const known = readDetails.get(entry.id);
  if (known?.status === entry.runtimeStatus) return known.details;
  try {
    const document = await statusDocumentOf(entry.id);
    const path = document.input?.path;
    const details = { resource: path ? resourceOf(path) : undefined, lastError: entry.runtimeStatus === 'Failed' ? lastUpstreamError(document) : '' };
    if (readDetails.size >= maxRemembered) readDetails.clear();
    readDetails.set(entry.id, { status: entry.runtimeStatus, details });
    return details;
  } catch {
    return { lastError: entry.runtimeStatus === 'Failed' ? '(could not be read)' : '' };
  }
}

/** The details of each entry, read a few at a time. */
export async function detailsOf(entries: ListEntry[], concurrency = 4): Promise<Map<string, RowDetails>> {
  const details = new Map<string, RowDetails>();
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const entry = entries[next++]!;
      details.set(entry.id, await detailsOfOne(entry));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return details;
}

/**
 * The entries the filter matches, from the list's metadata (no input read): at most `maxEntries`,
 * in list pages of at most 1000, as the list answers them (in id order); `complete` when none was
 * left out.
 */
export async function matchesOf(filter: Filter, maxEntries: number): Promise<{ entries: ListEntry[]; complete: boolean }> {
  const entries: ListEntry[] = [];
  let token: string | undefined;
  // An answer may end early with a token (each reads at most 10,000 documents), so the number
  // of reads is bounded too: what the entries need, and a few for sparse matches.
  for (let reads = Math.ceil(maxEntries / 1000) + 4; entries.length < maxEntries && reads > 0; reads -= 1) {
    const top = Math.min(1000, maxEntries - entries.length);
    const answer = await call<{ value: ListEntry[] }>(`orchestrations?${queryOf(filter, { top: String(top) })}`, { headers: tokenHeaders(token) });
    entries.push(
      ...answer.body.value.map(({ id, name, runtimeStatus, createdTime, lastUpdatedTime, endedTime, startedBy }) => ({
        id,
        name,
        runtimeStatus,
        createdTime,
        lastUpdatedTime,
        endedTime,
        startedBy,
      })),
    );
    token = answer.headers.get(tokenHeader) ?? undefined;
    if (!token) return { entries, complete: true };
  }
  return { entries, complete: false };
}

/** `GET orchestrations/counts`: how many the filters match in each status, `complete` unless it stopped at the scan bound. */
export interface StatusCounts {
  counts: Record<RuntimeStatus, number>;
  complete: boolean;
}

export const countsOf = async (filter: Filter): Promise<StatusCounts> => (await call<StatusCounts>(`orchestrations/counts?${queryOf(filter, {})}`)).body;

export type BulkAction = 'terminate' | 'restart';

/** One batch of a bulk action's answer. */
export interface BulkAnswer {
  count: number;
  instanceIds?: string[];
  done?: number;
  results?: { instanceId: string; status: number; restartedAs?: string; error?: { code: string; message: string } }[];
}

/** Most batches one bulk action (or its dry run) calls for: ORCHESTRATION_BULK_BATCH each. */
const maxBulkCalls = 50;

/**
 * A bulk action on what the filters match, batch after batch while the answer says more
 * remain (at most `maxBulkCalls`): with `dryRun`, only what would be acted on. `complete` is false
 * when it stopped at that bound.
 */
export async function bulkOf(action: BulkAction, filter: Filter, dryRun: boolean): Promise<{ answers: BulkAnswer[]; complete: boolean }> {
  const answers: BulkAnswer[] = [];
  let token: string | undefined;
  for (let calls = 0; calls < maxBulkCalls; calls += 1) {
    const answer = await call<BulkAnswer>(`orchestrations/${action}?${queryOf(filter, dryRun ? { dryRun: 'true' } : {})}`, {
      method: 'POST',
      headers: tokenHeaders(token),
    });
    answers.push(answer.body);
    token = answer.headers.get(tokenHeader) ?? undefined;
    if (!token) return { answers, complete: true };
  }
  return { answers, complete: false };
}
