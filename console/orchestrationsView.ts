/**
 * The orchestrations view: filters, the table with Durable Functions Monitor's columns, paging
 * through the continuation token, auto-refresh, and the histogram of starts by status.
 */
import { ApiError, type Session } from './api';
import { announce, duration, h, replace, statusBadge, time } from './dom';
import { histogram } from './histogram';
import { lastErrorsOf, listPage, runtimeStatuses, startsOf, windowOf, type Filter, type ListEntry, type RuntimeStatus } from './orchestrationData';

/** Kept while the tab is open, so coming back from one orchestration finds the list as it was. */
const filter: Filter = { statuses: [], range: 'day', name: '', idPrefix: '' };
let refreshSeconds = 0;

export function orchestrationsView(container: HTMLElement, { pageSize, histogramMaxStarts }: Session['list']): () => void {
  /** The tokens of the pages before the one shown (the first page's is undefined). */
  const previous: (string | undefined)[] = [];
  let current: string | undefined;
  let next: string | undefined;
  let loading = false;

  const tableArea = h('div', { class: 'table-area', 'aria-live': 'polite', 'aria-busy': 'false' });
  const chartArea = h('div', { class: 'chart-area' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of orchestrations' });

  async function load(): Promise<void> {
    if (loading) return;
    loading = true;
    tableArea.setAttribute('aria-busy', 'true');
    try {
      const [page, starts] = await Promise.all([listPage(filter, pageSize, current), startsOf(filter, histogramMaxStarts)]);
      next = page.next;
      const errors = await lastErrorsOf(page.entries);
      replace(tableArea, table(page.entries, errors));
      replace(chartArea, histogram(starts.starts, windowOf(filter), starts.complete));
      drawPager();
    } catch (error) {
      replace(tableArea, h('p', { class: 'error', role: 'alert' }, error instanceof ApiError ? `${error.code}: ${error.message}` : String(error)));
    } finally {
      loading = false;
      tableArea.setAttribute('aria-busy', 'false');
    }
  }

  function drawPager() {
    replace(
      pager,
      h('button', { type: 'button', disabled: previous.length === 0, onclick: () => goTo(previous.pop(), false) }, 'Previous page'),
      h('span', {}, `Page ${previous.length + 1}`),
      h('button', { type: 'button', disabled: !next, onclick: () => goTo(next, true) }, 'Next page'),
    );
  }

  function goTo(token: string | undefined, forward: boolean) {
    if (forward) previous.push(current);
    current = token;
    void load();
  }

  const form = filterForm(() => {
    previous.length = 0;
    current = undefined;
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
  replace(
    container,
    h('h1', {}, 'Orchestrations'),
    form,
    h('div', { class: 'toolbar' }, h('label', { for: 'auto-refresh' }, 'Auto-refresh '), refreshSelect, h('button', { type: 'button', onclick: () => void load() }, 'Refresh now')),
    chartArea,
    tableArea,
    pager,
  );
  schedule();
  void load();
  return () => {
    if (timer !== undefined) clearInterval(timer);
  };
}

function filterForm(apply: () => void): HTMLFormElement {
  const statusBoxes = runtimeStatuses.map((status) =>
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'status', value: status, checked: filter.statuses.includes(status) }), ` ${status}`),
  );
  const custom = h(
    'span',
    { class: 'custom-range', hidden: filter.range !== 'custom' },
    h('label', {}, 'From ', h('input', { type: 'datetime-local', name: 'from' })),
    h('label', {}, ' to ', h('input', { type: 'datetime-local', name: 'to' })),
  );
  const range = h(
    'select',
    { id: 'range', name: 'range', onchange: (event) => (custom.hidden = (event.target as HTMLSelectElement).value !== 'custom') },
    ...(
      [
        ['hour', 'last hour'],
        ['day', 'last 24 hours'],
        ['week', 'last 7 days'],
        ['any', 'any time'],
        ['custom', 'custom'],
      ] as const
    ).map(([value, label]) => h('option', { value, selected: filter.range === value }, label)),
  );
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Filter orchestrations',
      onsubmit: (event) => {
        event.preventDefault();
        const data = new FormData(form);
        filter.statuses = data.getAll('status').map(String) as RuntimeStatus[];
        filter.range = String(data.get('range')) as Filter['range'];
        const local = (name: string) => (data.get(name) ? new Date(String(data.get(name))).toISOString() : undefined);
        filter.from = local('from');
        filter.to = local('to');
        filter.name = String(data.get('name') ?? '');
        filter.idPrefix = String(data.get('idPrefix') ?? '');
        apply();
      },
    },
    h('fieldset', {}, h('legend', {}, 'Runtime status'), ...statusBoxes),
    h('div', { class: 'field' }, h('label', { for: 'range' }, 'Created '), range, custom),
    h('div', { class: 'field' }, h('label', { for: 'name' }, 'Name (operation id) '), h('input', { id: 'name', name: 'name', value: filter.name, placeholder: 'ContainerGroups_CreateOrUpdate' })),
    h('div', { class: 'field' }, h('label', { for: 'idPrefix' }, 'Id prefix '), h('input', { id: 'idPrefix', name: 'idPrefix', value: filter.idPrefix })),
    h('button', { type: 'submit' }, 'Apply filters'),
  );
  return form;
}

const columns = ['Id', 'Name', 'Created', 'Last updated', 'Duration', 'Runtime status', 'Target resource', 'Started by', 'Last upstream error'];

function table(entries: ListEntry[], errors: Map<string, string>): HTMLElement {
  if (entries.length === 0) return h('p', { class: 'empty' }, 'No orchestration matches these filters.');
  return h(
    'table',
    { class: 'orchestrations' },
    h('caption', {}, `${entries.length} orchestration${entries.length === 1 ? '' : 's'} on this page`),
    h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
    h(
      'tbody',
      {},
      ...entries.map((entry) =>
        h(
          'tr',
          { 'data-id': entry.id },
          h('td', {}, h('a', { href: `#/orchestrations/${encodeURIComponent(entry.id)}`, class: 'mono' }, entry.id)),
          h('td', {}, entry.name),
          h('td', {}, time(entry.createdTime)),
          h('td', {}, time(entry.lastUpdatedTime)),
          h('td', {}, duration(entry.createdTime, entry.endedTime ?? (entry.runtimeStatus === 'Pending' || entry.runtimeStatus === 'Running' ? null : entry.lastUpdatedTime))),
          h('td', {}, statusBadge(entry.runtimeStatus)),
          h('td', { class: 'mono wrap' }, entry.input?.path ?? '-'),
          h('td', { class: 'mono' }, entry.startedBy ?? '-'),
          h('td', { class: 'wrap upstream-error' }, errors.get(entry.id) ?? ''),
        ),
      ),
    ),
  );
}
