/**
 * The orchestrations view's filters, as the list API takes them (runtime status, created time,
 * operation name, id prefix), kept while the tab is open so that coming back from one
 * orchestration finds the list as it was.
 */
import { h } from './dom';
import { runtimeStatuses, type Filter, type RuntimeStatus } from './orchestrationData';

export const filter: Filter = { statuses: [], range: 'day', name: '', idPrefix: '' };

export function filterForm(apply: () => void): HTMLFormElement {
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
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'name' }, 'Name (operation id) '),
      h('input', { id: 'name', name: 'name', value: filter.name, placeholder: 'ContainerGroups_CreateOrUpdate' }),
    ),
    h('div', { class: 'field' }, h('label', { for: 'idPrefix' }, 'Id prefix '), h('input', { id: 'idPrefix', name: 'idPrefix', value: filter.idPrefix })),
    h('button', { type: 'submit' }, 'Apply filters'),
  );
  return form;
}
