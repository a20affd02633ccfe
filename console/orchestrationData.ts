/**
 * What the orchestrations view reads: a page of the list (with inputs, for the target
 * resource), the last upstream error of the page's failed ones, and the starts for the
 * histogram. Only the documented routes, with the filters as the API takes them.
 */
import { call } from './api';

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

/** An entry of `GET orchestrations` (its times are ISO text; `input` with `showInput=true`, whose `path` is the target). */
export interface ListEntry extends Record<'id' | 'name' | 'createdTime' | 'lastUpdatedTime', string> {
  runtimeStatus: RuntimeStatus;
  endedTime?: string;
  startedBy?: string;
  input?: { path?: string } | null;
}

export interface StatusDocument extends ListEntry {
  output: { status?: number; body?: unknown } | null;
  customStatus: { upstreamState?: string; lastReadStatus?: number; lastPolledTime?: string; message?: string } | null;
  failure: { code: string; message: string } | null;
  nextPollTime: string | null;
  pollCount: number;
  deadlineTime: string | null;
  notifications: { targetOrigin: string; eventId: string; state: string; attempts: number; nextAttemptTime: string | null; lastError: string | null; deliveredTime: string | null }[];
}

const rangeMs = { hour: 3600_000, day: 86_400_000, week: 7 * 86_400_000 };

/** The created-time window a filter means, as ISO times (either may be absent). */
export function windowOf(filter: Filter, now = Date.now()): { from?: string; to?: string } {
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

export async function listPage(filter: Filter, top: number, token: string | undefined): Promise<{ entries: ListEntry[]; next?: string }> {
  const answer = await call<{ value: ListEntry[] }>(`orchestrations?${queryOf(filter, { top: String(top), showInput: 'true' })}`, { headers: tokenHeaders(token) });
  return { entries: answer.body.value, next: answer.headers.get(tokenHeader) ?? undefined };
}

export const statusDocumentOf = async (id: string): Promise<StatusDocument> => (await call<StatusDocument>(`orchestrations/${encodeURIComponent(id)}`)).body;

/** The upstream's last error as the document holds it: the failure, the final error answer, or the last poll's message. */
export function lastUpstreamError(document: StatusDocument): string {
  const answerError = (document.output?.body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (answerError && (document.output?.status ?? 0) >= 400) return `${String(answerError.code ?? '')}: ${String(answerError.message ?? '')}`;
  if (document.failure) return `${document.failure.code}: ${document.failure.message}`;
  return document.customStatus?.message ?? '';
}

/** The last upstream error of each failed entry, read a few at a time. */
export async function lastErrorsOf(entries: ListEntry[], concurrency = 4): Promise<Map<string, string>> {
  const failed = entries.filter((entry) => entry.runtimeStatus === 'Failed');
  const errors = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < failed.length) {
      const entry = failed[next++]!;
      try {
        errors.set(entry.id, lastUpstreamError(await statusDocumentOf(entry.id)));
      } catch {
        errors.set(entry.id, '(could not be read)');
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return errors;
}

/** The starts the filter matches, for the histogram: at most `maxStarts`, in list pages of at most 1000; `complete` when none was left out. */
export async function startsOf(filter: Filter, maxStarts: number): Promise<{ starts: Pick<ListEntry, 'createdTime' | 'runtimeStatus'>[]; complete: boolean }> {
  const starts: Pick<ListEntry, 'createdTime' | 'runtimeStatus'>[] = [];
  let token: string | undefined;
  // An answer may end early with a token (each reads at most 10,000 documents), so the number
  // of reads is bounded too: what the starts need, and a few for sparse matches.
  for (let reads = Math.ceil(maxStarts / 1000) + 4; starts.length < maxStarts && reads > 0; reads -= 1) {
    const top = Math.min(1000, maxStarts - starts.length);
    const answer = await call<{ value: ListEntry[] }>(`orchestrations?${queryOf(filter, { top: String(top) })}`, { headers: tokenHeaders(token) });
    starts.push(...answer.body.value.map(({ createdTime, runtimeStatus }) => ({ createdTime, runtimeStatus })));
    token = answer.headers.get(tokenHeader) ?? undefined;
    if (!token) return { starts, complete: true };
  }
  return { starts, complete: false };
}
