/**
 * The query parameters of the orchestration routes, with Durable Functions' names
 * (`runtimeStatus`, `createdTimeFrom`, `createdTimeTo`, `instanceIdPrefix`, `top`, `showInput`;
 * paging with `x-ms-continuation-token`), and the app's own `gateway-wait`. Every problem is a
 * 400 in the documented shape, all of them at once.
 */
import type { ErrorDetail } from '../errors';
import type { RuntimeStatus } from '../orchestration';
import { cursorOf, invalidContinuationMessage, type SummaryFilter } from '../orchestration';
import { appParameterOf, isAppQueryParameter } from '../rules';
import { invalidRequest, ProblemList } from '../rules';

export const runtimeStatuses: readonly RuntimeStatus[] = ['Pending', 'Running', 'Completed', 'Failed', 'Terminated'];
export const continuationHeader = 'x-ms-continuation-token';

/** Most entries one list answer holds (Durable's `top`), and its default. */
export const listBounds = { defaultTop: 100, maxTop: 1000 };

const problem = (target: string, message: string): ErrorDetail => ({ code: 'InvalidParameter', target, message });

/** The list filters' parameters, with Durable Functions' names. */
const filterParameters = ['runtimeStatus', 'name', 'createdTimeFrom', 'createdTimeTo', 'instanceIdPrefix'];

/**
 * The query with each parameter under its documented name, matched ignoring case as `code` is
 * (`DryRun=TRUE` is `dryRun`), so a misspelt case never goes unread. A destructive action
 * (`refuseUnknown`) never guesses: a parameter it does not take is refused, naming it; the app's
 * own (`code`, `gateway-wait`) are always taken.
 */
function documentedQuery(query: URLSearchParams, names: readonly string[], problems: ProblemList, refuseUnknown: boolean): URLSearchParams {
  const byLowerCase = new Map(names.map((name) => [name.toLowerCase(), name]));
  const documented = new URLSearchParams();
  for (const [given, value] of query) {
    const name = byLowerCase.get(given.toLowerCase());
    if (name !== undefined) documented.append(name, value);
    else if (refuseUnknown && !isAppQueryParameter(given))
      problems.add(problem(given.slice(0, 40), `${given.slice(0, 40)} is not a parameter of this action; it takes ${names.join(', ')}.`));
  }
  return documented;
}

/**
 * `gateway-wait=<seconds>`: how long to hold the answer, held to `maxSeconds` (below the
 * 230 s the Azure front end allows a request). Undefined when not asked; a problem when not a
 * whole number of seconds.
 */
export function waitSecondsOf(query: URLSearchParams, maxSeconds: number): number | ErrorDetail | undefined {
  const text = appParameterOf(query, 'gateway-wait');
  if (text === null) return undefined;
  if (!/^\d{1,6}$/.test(text)) return problem('gateway-wait', `gateway-wait must be a whole number of seconds (at most ${maxSeconds} are waited).`);
  return Math.min(Number(text), maxSeconds);
}

function isoTimeOf(query: URLSearchParams, name: string, problems: ProblemList): string | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) {
    problems.add(problem(name, `${name} must be an ISO 8601 date or date-time, e.g. 2026-11-23T08:00:00Z.`));
    return undefined;
  }
  return new Date(ms).toISOString();
}

/** A comma-separated list; empty is the same as not given. */
function listOf(query: URLSearchParams, name: string): string[] | undefined {
  const items =
    query
      .get(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean) ?? [];
  return items.length > 0 ? items : undefined;
}

/** The filter shared by the list and the purge: status, operation, creation time, id prefix. */
function filterOf(query: URLSearchParams, problems: ProblemList): SummaryFilter {
  const statuses = listOf(query, 'runtimeStatus')?.map((status) => {
    const known = runtimeStatuses.find((candidate) => candidate.toLowerCase() === status.toLowerCase());
    if (!known)
      problems.add(
        problem('runtimeStatus', `Unknown runtimeStatus "${status.slice(0, 40)}"; it takes a comma-separated list of ${runtimeStatuses.join(', ')}.`),
      );
    return known;
  });
  const names = listOf(query, 'name');
  if (names?.some((name) => !/^[A-Za-z0-9_]{1,100}$/.test(name)))
    problems.add(problem('name', 'name takes a comma-separated list of operation ids, e.g. ContainerGroups_CreateOrUpdate.'));
  const idPrefix = query.get('instanceIdPrefix') ?? undefined;
  if (idPrefix !== undefined && !/^[0-9a-f-]{1,36}$/i.test(idPrefix))
    problems.add(problem('instanceIdPrefix', 'instanceIdPrefix must be the start of an orchestration id (hexadecimal digits and dashes).'));
  return {
    statuses: statuses?.filter((status): status is RuntimeStatus => status !== undefined),
    names,
    createdFrom: isoTimeOf(query, 'createdTimeFrom', problems),
    createdTo: isoTimeOf(query, 'createdTimeTo', problems),
    idPrefix: idPrefix?.toLowerCase(),
  };
}

/** The continuation token, checked here so a forged one is refused before any storage call. */
function continuationOf(headers: { get(name: string): string | null }, problems: ProblemList): string | undefined {
  const token = headers.get(continuationHeader) ?? undefined;
  if (token !== undefined && !cursorOf(token)) problems.add(problem(continuationHeader, invalidContinuationMessage));
  return token;
}

export interface ListRequest {
  filter: SummaryFilter;
  top: number;
  showInput: boolean;
  continuationToken?: string;
}

export function listRequestOf(given: URLSearchParams, headers: { get(name: string): string | null }): ListRequest {
  const problems = new ProblemList();
  const query = documentedQuery(given, [...filterParameters, 'top', 'showInput'], problems, false);
  const filter = filterOf(query, problems);
  const topText = query.get('top');
  const top = topText === null ? listBounds.defaultTop : /^[1-9][0-9]{0,4}$/.test(topText) ? Number(topText) : NaN;
  if (!(top <= listBounds.maxTop)) problems.add(problem('top', `top must be a whole number from 1 to ${listBounds.maxTop}.`));
  const showInputText = query.get('showInput');
  if (showInputText !== null && !/^(true|false)$/i.test(showInputText)) problems.add(problem('showInput', 'showInput must be true or false.'));
  const continuationToken = continuationOf(headers, problems);
  if (problems.total > 0) throw invalidRequest(problems);
  return { filter, top, showInput: showInputText?.toLowerCase() === 'true', continuationToken };
}

/** At least one filter, so that no call acts on every orchestration by accident. */
function requireFilter(filter: SummaryFilter, what: string, problems: ProblemList): void {
  if (!filter.statuses && !filter.names && !filter.createdFrom && !filter.createdTo && !filter.idPrefix) {
    problems.add(problem('query', `Name what to ${what}: runtimeStatus, name, createdTimeFrom, createdTimeTo or instanceIdPrefix.`));
  }
}

/** The purge by filter: ended orchestrations only, and at least one filter, so no call empties the store by accident. */
export function purgeRequestOf(given: URLSearchParams, headers: { get(name: string): string | null }): { filter: SummaryFilter; continuationToken?: string } {
  const problems = new ProblemList();
  const query = documentedQuery(given, filterParameters, problems, true);
  const filter = filterOf(query, problems);
  if (filter.statuses?.some((status) => status === 'Pending' || status === 'Running')) {
    problems.add(problem('runtimeStatus', 'Only ended orchestrations (Completed, Failed, Terminated) can be purged; terminate a running one first.'));
  }
  requireFilter(filter, 'purge', problems);
  const continuationToken = continuationOf(headers, problems);
  if (problems.total > 0) throw invalidRequest(problems);
  return { filter, continuationToken };
}

/** How much of the store one list, count, purge or bulk request may read, and for how long. */
export function scanBoundsOf(config: { ORCHESTRATION_QUERY_MAX_SCANNED: number }): { maxScanned: number; timeBudgetMs: number } {
  return { maxScanned: config.ORCHESTRATION_QUERY_MAX_SCANNED, timeBudgetMs: 5000 };
}

export type BulkAction = 'terminate' | 'restart';

/** The statuses each bulk action acts on: terminate the running, restart the ended. */
export const bulkStatuses: Record<BulkAction, readonly RuntimeStatus[]> = { terminate: ['Pending', 'Running'], restart: ['Completed', 'Failed', 'Terminated'] };

export interface BulkRequest {
  filter: SummaryFilter;
  dryRun: boolean;
  continuationToken?: string;
  /** A bulk terminate's reason, as each terminated orchestration records it. */
  reason?: string;
}

/**
 * A bulk terminate or restart: at least one filter, the statuses held to those the action takes
 * (all of them when none is named), `dryRun=true` to only count.
 */
export function bulkRequestOf(action: BulkAction, given: URLSearchParams, headers: { get(name: string): string | null }): BulkRequest {
  const problems = new ProblemList();
  const query = documentedQuery(given, [...filterParameters, 'dryRun', ...(action === 'terminate' ? ['reason'] : [])], problems, true);
  const filter = filterOf(query, problems);
  const actedOn = bulkStatuses[action];
  const statuses = filter.statuses?.filter((status) => actedOn.includes(status)) ?? actedOn;
  if (filter.statuses && statuses.length === 0)
    problems.add(
      problem(
        'runtimeStatus',
        `${action === 'terminate' ? 'Terminate' : 'Restart'} acts on ${actedOn.join(', ')} orchestrations only; name one of those, or no runtimeStatus.`,
      ),
    );
  requireFilter(filter, action, problems);
  const dryRunText = query.get('dryRun');
  if (dryRunText !== null && !/^(true|false)$/i.test(dryRunText)) problems.add(problem('dryRun', 'dryRun must be true or false.'));
  const continuationToken = continuationOf(headers, problems);
  if (problems.total > 0) throw invalidRequest(problems);
  return { filter: { ...filter, statuses }, dryRun: dryRunText?.toLowerCase() === 'true', continuationToken, reason: query.get('reason') ?? undefined };
}

/** The counts by status: the list's filters, none required. */
export function countsRequestOf(given: URLSearchParams, headers: { get(name: string): string | null }): { filter: SummaryFilter; continuationToken?: string } {
  const problems = new ProblemList();
  const query = documentedQuery(given, filterParameters, problems, false);
  const filter = filterOf(query, problems);
  const continuationToken = continuationOf(headers, problems);
  if (problems.total > 0) throw invalidRequest(problems);
  return { filter, continuationToken };
}
