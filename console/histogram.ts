/**
 * The time histogram of starts by status, as Durable Functions Monitor draws it: the window
 * cut into equal buckets, each a bar stacked by runtime status. SVG built element by element;
 * each bar's title and the legend say in words what the colours show.
 */
import { h, svg } from './dom';
import { runtimeStatuses, type ListEntry } from './orchestrationData';

const buckets = 24;
const width = 720;
const height = 140;
const axis = 18;

export function histogram(starts: Pick<ListEntry, 'createdTime' | 'runtimeStatus'>[], window: { from?: string; to?: string }, complete: boolean): HTMLElement {
  const times = starts.map((start) => Date.parse(start.createdTime)).filter(Number.isFinite);
  const end = window.to ? Date.parse(window.to) : Date.now();
  const begin = window.from ? Date.parse(window.from) : times.length ? Math.min(...times) : end - 3600_000;
  const span = Math.max(1, end - begin);
  const counts = Array.from({ length: buckets }, () => Object.fromEntries(runtimeStatuses.map((status) => [status, 0])) as Record<string, number>);
  const totals: Record<string, number> = Object.fromEntries(runtimeStatuses.map((status) => [status, 0]));
  for (const start of starts) {
    const at = Date.parse(start.createdTime);
    const index = Math.min(buckets - 1, Math.max(0, Math.floor(((at - begin) / span) * buckets)));
    counts[index]![start.runtimeStatus] = (counts[index]![start.runtimeStatus] ?? 0) + 1;
    totals[start.runtimeStatus] = (totals[start.runtimeStatus] ?? 0) + 1;
  }
  const tallest = Math.max(1, ...counts.map((bucket) => Object.values(bucket).reduce((sum, count) => sum + count, 0)));
  const barWidth = width / buckets;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + axis}`, class: 'histogram-chart', 'aria-hidden': 'true', focusable: 'false' });
  counts.forEach((bucket, index) => {
    let top = height;
    const from = new Date(begin + (span * index) / buckets);
    const to = new Date(begin + (span * (index + 1)) / buckets);
    for (const status of runtimeStatuses) {
      const count = bucket[status] ?? 0;
      if (count === 0) continue;
      const barHeight = (count / tallest) * (height - 4);
      top -= barHeight;
      chart.appendChild(
        svg(
          'rect',
          { x: index * barWidth + 1, y: top, width: barWidth - 2, height: barHeight, class: `bar status-${status.toLowerCase()}`, 'data-status': status, 'data-count': count },
          svg('title', {}, `${from.toLocaleString()} to ${to.toLocaleString()}: ${count} ${status}`),
        ),
      );
    }
  });
  chart.appendChild(svg('text', { x: 0, y: height + axis - 4, class: 'axis' }, new Date(begin).toLocaleString()));
  chart.appendChild(svg('text', { x: width, y: height + axis - 4, class: 'axis', 'text-anchor': 'end' }, new Date(end).toLocaleString()));
  const summary = runtimeStatuses.map((status) => `${totals[status]} ${status}`).join(', ');
  return h(
    'figure',
    { class: 'histogram', 'data-total': starts.length },
    h('figcaption', {}, `Starts by status${complete ? '' : ` (the first ${starts.length} only)`}: ${summary}`),
    chart,
    h('ul', { class: 'legend' }, ...runtimeStatuses.map((status) => h('li', {}, h('span', { class: `swatch status-${status.toLowerCase()}`, 'aria-hidden': 'true' }), `${status}: ${totals[status]}`))),
  );
}
