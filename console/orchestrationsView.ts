/**
 * The orchestrations view: filters, the histogram of starts by status, and the table, newest
 * first. The list API answers in id order, a page at a time; the view reads every entry the
 * filters match from the list's metadata (at most CONSOLE_HISTOGRAM_MAX_STARTS, what the histogram
 * counts anyway), sorts them, pages through them CONSOLE_PAGE_SIZE a page, and reads the documents
 * of the page shown only (their targets, the failed ones' errors). The search box filters that page.
 * The counts by status (`GET orchestrations/counts`) give the histogram's totals and the list's
 * whole; the bulk actions act on what the filters match.
 */
import { ApiError, type Session } from './api';
import { announce, h, replace } from './dom';
import { histogram } from './histogram';
import { bulkButtons } from './bulkActions';
import { countsOf, detailsOf, matchesOf, type ListEntry, type RowDetails, type StatusCounts } from './orchestrationData';
import { filter, filterForm } from './orchestrationFilters';
import { rangeText, sortAfterClick, sorted, sortLabel, table, type Sort, type SortKey } from './orchestrationTable';
import type { ResourceRef } from './resource';

/** Kept while the tab is open, as the filters are. */
let refreshSeconds = 0;
let sort: Sort = { key: 'created', descending: true };
let search = '';

const matchesSearch = (resource: ResourceRef | undefined, term: string) =>
  resource !== undefined && `${resource.name} ${resource.group ?? ''}`.toLowerCase().includes(term);

export function orchestrationsView(container: HTMLElement, { pageSize, histogramMaxStarts }: Session['list']): () => void {
  let pageIndex = 0;
  let matched: { entries: ListEntry[]; complete: boolean } = { entries: [], complete: true };
  /** Undefined when the counts could not be read: the view then counts what it read, as before. */
  let counted: StatusCounts | undefined;
  let pageEntries: ListEntry[] = [];
  let details = new Map<string, RowDetails>();
  /** Each draw's number: a slower one that an other overtook draws nothing. */
  let drawn = 0;
  let loading = false;

  const tableArea = h('div', { class: 'table-area', 'aria-live': 'polite', 'aria-busy': 'false' });
  const chartArea = h('div', { class: 'chart-area' });
  const readLimit = h('p', { class: 'read-limit', hidden: true });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of orchestrations' });

  const showError = (error: unknown) =>
    replace(tableArea, h('p', { class: 'error', role: 'alert' }, error instanceof ApiError ? `${error.code}: ${error.message}` : String(error)));

  /** Reads the list again, then shows the page. */
  async function load(): Promise<void> {
    if (loading) return;
    loading = true;
    tableArea.setAttribute('aria-busy', 'true');
    try {
      [matched, counted] = await Promise.all([matchesOf(filter, histogramMaxStarts), countsOf(filter).catch(() => undefined)]);
      replace(chartArea, histogram(matched.entries, matched.complete, counted));
      readLimit.hidden = matched.complete;
      readLimit.textContent = `More orchestrations match than the ${histogramMaxStarts} the console reads (CONSOLE_HISTOGRAM_MAX_STARTS): the table and the histogram hold the first ${histogramMaxStarts} the list answered (in id order), sorted. Narrow the filters to see the others.`;
      await showPage();
    } catch (error) {
      showError(error);
    } finally {
      loading = false;
      tableArea.setAttribute('aria-busy', 'false');
    }
  }

  /** Shows the page `pageIndex` of what was read, in the current sort, with its documents read. */
  async function showPage(focusSort?: SortKey): Promise<void> {
    const mine = ++drawn;
    const ordered = sorted(matched.entries, sort);
    const pages = Math.max(1, Math.ceil(ordered.length / pageSize));
    pageIndex = Math.min(pageIndex, pages - 1);
    const entries = ordered.slice(pageIndex * pageSize, (pageIndex + 1) * pageSize);
    const read = await detailsOf(entries);
    if (mine !== drawn) return;
    pageEntries = entries;
    details = read;
    drawTable();
    drawPager(pages);
    if (focusSort) tableArea.querySelector<HTMLElement>(`button[data-key="${focusSort}"]`)?.focus();
  }

  function drawTable(): void {
    const term = search.trim().toLowerCase();
    const shown = term ? pageEntries.filter((entry) => matchesSearch(details.get(entry.id)?.resource, term)) : pageEntries;
    if (pageEntries.length === 0) return replace(tableArea, h('p', { class: 'empty' }, 'No orchestration matches these filters.'));
    if (shown.length === 0)
      return replace(tableArea, h('p', { class: 'empty' }, `No orchestration on this page matches "${search.trim()}" (resource name or group).`));
    const first = pageIndex * pageSize + 1;
    const range = rangeText(first, pageEntries.length, matched.entries.length, counted);
    const caption = `Orchestrations ${range}, sorted by ${sortLabel(sort)}${term ? `; ${shown.length} on this page match "${search.trim()}"` : ''}`;
    replace(
      tableArea,
      table(shown, details, sort, caption, (key) => {
        sort = sortAfterClick(sort, key);
        pageIndex = 0;
        announce(`Sorted by ${sortLabel(sort)}.`);
        void showPage(key).catch(showError);
      }),
    );
  }

  function drawPager(pages: number): void {
    const goTo = (index: number) => {
      pageIndex = index;
      void showPage().catch(showError);
    };
    replace(
      pager,
      h('button', { type: 'button', disabled: pageIndex === 0, onclick: () => goTo(pageIndex - 1) }, 'Previous page'),
      h('span', {}, `Page ${pageIndex + 1} of ${pages}`),
      h('button', { type: 'button', disabled: pageIndex >= pages - 1, onclick: () => goTo(pageIndex + 1) }, 'Next page'),
    );
  }

  const form = filterForm(() => {
    pageIndex = 0;
    void load();
  });
  let timer: number | undefined;
  const schedule = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = refreshSeconds > 0 ? window.setInterval(() => void load(), refreshSeconds * 1000) : undefined;
  };
  const refreshSelect = h(
    'select',
    {
      id: 'auto-refresh',
      onchange: (event) => {
        refreshSeconds = Number((event.target as HTMLSelectElement).value);
        schedule();
        announce(refreshSeconds ? `The list refreshes every ${refreshSeconds} seconds.` : 'Auto-refresh is off.');
      },
    },
    ...[0, 5, 30].map((seconds) => h('option', { value: seconds, selected: seconds === refreshSeconds }, seconds ? `every ${seconds} s` : 'off')),
  );
  const searchBox = h('input', {
    id: 'resource-search',
    type: 'search',
    value: search,
    autocomplete: 'off',
    oninput: (event) => {
      search = (event.target as HTMLInputElement).value;
      drawTable();
    },
  });
  replace(
    container,
    h('h1', {}, 'Orchestrations'),
    form,
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, h('label', { for: 'auto-refresh' }, 'Auto-refresh '), refreshSelect),
      h('button', { type: 'button', onclick: () => void load() }, 'Refresh now'),
      h('span', { class: 'search' }, h('label', { for: 'resource-search' }, 'Search this page by resource name '), searchBox),
      bulkButtons(() => void load()),
    ),
    chartArea,
    readLimit,
    tableArea,
    pager,
  );
  schedule();
  void load();
  return () => {
    if (timer !== undefined) clearInterval(timer);
  };
}
