/**
 * The orchestrations table with Durable Functions Monitor's columns: sorted by any column the
 * list's metadata holds (the header's button; `aria-sort` says how), newest first unless asked,
 * the target as the resource's name and group (the whole path on hover).
 */
import { duration, h, statusBadge, time, type Child } from './dom';
import { endOf, type ListEntry, type RowDetails, type StatusCounts } from './orchestrationData';

export type SortKey = 'id' | 'name' | 'created' | 'updated' | 'duration' | 'status' | 'startedBy';
export interface Sort {
  key: SortKey;
  descending: boolean;
}

interface Column {
  label: string;
  /** Sortable: the key and each entry's value for it. */
  key?: SortKey;
  value?: (entry: ListEntry) => string | number;
  /** Times and durations sort the largest first at the first click. */
  largestFirst?: boolean;
  /** Left out of a narrow window (console.css): the detail view has it. */
  secondary?: boolean;
}

const durationMs = (entry: ListEntry) => Date.parse(endOf(entry) ?? new Date().toISOString()) - Date.parse(entry.createdTime);

const columns: Column[] = [
  { label: 'Id', key: 'id', value: (entry) => entry.id },
  { label: 'Name', key: 'name', value: (entry) => entry.name },
  { label: 'Created', key: 'created', value: (entry) => Date.parse(entry.createdTime), largestFirst: true },
  { label: 'Last updated', key: 'updated', value: (entry) => Date.parse(entry.lastUpdatedTime), largestFirst: true, secondary: true },
  { label: 'Duration', key: 'duration', value: durationMs, largestFirst: true },
  { label: 'Runtime status', key: 'status', value: (entry) => entry.runtimeStatus },
  { label: 'Target resource' },
  { label: 'Started by', key: 'startedBy', value: (entry) => entry.startedBy ?? '', secondary: true },
  { label: 'Last upstream error' },
];

const columnOf = (key: SortKey) => columns.find((column) => column.key === key)!;

/** The sort after a click on `key`'s header: the other way round if it is the current one, else its own first way. */
export const sortAfterClick = (sort: Sort, key: SortKey): Sort =>
  sort.key === key ? { key, descending: !sort.descending } : { key, descending: columnOf(key).largestFirst === true };

export const sortLabel = (sort: Sort): string => `${columnOf(sort.key).label}, ${sort.descending ? 'descending' : 'ascending'}`;

/** `entries` in `sort`'s order; ties newest first, then by id, so the order is the same at each refresh. */
export function sorted(entries: readonly ListEntry[], sort: Sort): ListEntry[] {
  const value = columnOf(sort.key).value!;
  const compare = (a: string | number, b: string | number) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b)));
  return [...entries].sort(
    (a, b) => (sort.descending ? -1 : 1) * compare(value(a), value(b)) || Date.parse(b.createdTime) - Date.parse(a.createdTime) || a.id.localeCompare(b.id),
  );
}

/** Text that may break after a `_` or `/` and between the words of a camel-case name (`PrivateEndpoint|Connections_|CreateOrUpdate`), not elsewhere. */
function breakable(text: string): Child[] {
  return text.split(/(?<=[_/])|(?<=[a-z])(?=[A-Z])/).flatMap((part, index) => (index > 0 ? [h('wbr'), part] : [part]));
}

function target(details: RowDetails | undefined): HTMLElement {
  const resource = details?.resource;
  if (!resource) return h('td', {}, '-');
  return h(
    'td',
    { class: 'target', title: resource.path },
    h('span', { class: 'resource-name mono' }, ...breakable(resource.name)),
    h('span', { class: 'resource-group' }, resource.group ?? ''),
  );
}

function row(entry: ListEntry, details: RowDetails | undefined): HTMLElement {
  return h(
    'tr',
    { 'data-id': entry.id },
    h(
      'td',
      {},
      h(
        'a',
        { href: `#/orchestrations/${encodeURIComponent(entry.id)}`, class: 'mono short-id', title: entry.id, 'aria-label': `Orchestration ${entry.id}` },
        `${entry.id.slice(0, 8)}…`,
      ),
    ),
    h('td', {}, ...breakable(entry.name)),
    h('td', {}, time(entry.createdTime)),
    h('td', { class: 'secondary' }, time(entry.lastUpdatedTime)),
    h('td', {}, duration(entry.createdTime, endOf(entry))),
    h('td', {}, statusBadge(entry.runtimeStatus)),
    target(details),
    h('td', { class: 'mono secondary' }, entry.startedBy ?? '-'),
    h('td', { class: 'wrap upstream-error' }, details?.lastError ?? ''),
  );
}

export function table(entries: ListEntry[], details: Map<string, RowDetails>, sort: Sort, caption: string, onSort: (key: SortKey) => void): HTMLElement {
  const header = (column: Column) =>
    h(
      'th',
      {
        scope: 'col',
        class: column.secondary ? 'secondary' : undefined,
        'aria-sort': column.key && column.key === sort.key ? (sort.descending ? 'descending' : 'ascending') : undefined,
      },
      column.key ? h('button', { type: 'button', class: 'sort', 'data-key': column.key, onclick: () => onSort(column.key!) }, column.label) : column.label,
    );
  return h(
    'table',
    { class: 'orchestrations' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map(header))),
    h('tbody', {}, ...entries.map((entry) => row(entry, details.get(entry.id)))),
  );
}

/**
 * The list header's range: `1–25 of 40`, where the whole is what the counts found when they are
 * known and complete (the table may hold fewer: those read), else what was read.
 */
export function rangeText(first: number, shown: number, read: number, counted: StatusCounts | undefined): string {
  const total = counted?.complete ? Object.values(counted.counts).reduce((sum, count) => sum + count, 0) : undefined;
  const whole = total !== undefined && total > read ? `${total} (the first ${read} read)` : String(read);
  return `${first}–${first + shown - 1} of ${whole}`;
}
