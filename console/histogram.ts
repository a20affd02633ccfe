/**
 * The time histogram of starts by status, as Durable Functions Monitor draws it: bars stacked by
 * runtime status, each as wide as the data's span calls for (a bar per 10 seconds for a minute of
 * local activity, a bar per hour for a day), so a few minutes of starts fall in several bars.
 * SVG built element by element; each bar's title and the legend say in words what the colours show.
 * With the counts of `GET orchestrations/counts`, the caption and the legend give every match by
 * status, not only those read for the bars.
 */
import { h, svg } from './dom';
import { runtimeStatuses, type ListEntry, type StatusCounts } from './orchestrationData';

const width = 720;
const height = 140;
const axis = 18;
/** At most this many bars; at least `minBars` slots, so one burst of starts is not one bar across the chart. */
const maxBars = 30;
const minBars = 12;

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;
/** Bar widths, the narrowest first, each with its words. */
const steps: [number, string][] = [
  [second, 'second'],
  [5 * second, '5 seconds'],
  [10 * second, '10 seconds'],
  [30 * second, '30 seconds'],
  [minute, 'minute'],
  [5 * minute, '5 minutes'],
  [10 * minute, '10 minutes'],
  [30 * minute, '30 minutes'],
  [hour, 'hour'],
  [3 * hour, '3 hours'],
  [6 * hour, '6 hours'],
  [12 * hour, '12 hours'],
  [day, 'day'],
  [7 * day, 'week'],
  [30 * day, '30 days'],
];

/** The first bar's start, on a multiple of `step` in the reader's time zone (whole hours, midnight). */
function alignedStart(time: number, step: number): number {
  const offset = new Date(time).getTimezoneOffset() * minute;
  return Math.floor((time - offset) / step) * step + offset;
}

/** The narrowest bar width that shows the span from `first` to `last` in at most `maxBars` bars. */
function stepFor(first: number, last: number): [number, string] {
  return steps.find(([step]) => Math.floor((last - alignedStart(first, step)) / step) + 1 <= maxBars) ?? steps.at(-1)!;
}

export function histogram(starts: Pick<ListEntry, 'createdTime' | 'runtimeStatus'>[], complete: boolean, counted?: StatusCounts): HTMLElement {
  const times = starts.map((start) => Date.parse(start.createdTime)).filter(Number.isFinite);
  const now = Date.now();
  const first = times.length ? Math.min(...times) : now;
  const last = times.length ? Math.max(...times) : now;
  const [step, stepWords] = stepFor(first, last);
  const begin = alignedStart(first, step);
  const bars = Math.max(minBars, Math.floor((last - begin) / step) + 1);
  const counts = Array.from({ length: bars }, () => Object.fromEntries(runtimeStatuses.map((status) => [status, 0])) as Record<string, number>);
  const totals: Record<string, number> = Object.fromEntries(runtimeStatuses.map((status) => [status, 0]));
  for (const start of starts) {
    const at = Date.parse(start.createdTime);
    if (!Number.isFinite(at)) continue;
    const index = Math.min(bars - 1, Math.floor((at - begin) / step));
    counts[index]![start.runtimeStatus] = (counts[index]![start.runtimeStatus] ?? 0) + 1;
    totals[start.runtimeStatus] = (totals[start.runtimeStatus] ?? 0) + 1;
  }
  const tallest = Math.max(1, ...counts.map((bucket) => Object.values(bucket).reduce((sum, count) => sum + count, 0)));
  const barWidth = width / bars;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + axis}`, class: 'histogram-chart', 'aria-hidden': 'true', focusable: 'false' });
  counts.forEach((bucket, index) => {
    let top = height;
    const from = new Date(begin + step * index);
    const to = new Date(begin + step * (index + 1));
    for (const status of runtimeStatuses) {
      const count = bucket[status] ?? 0;
      if (count === 0) continue;
      const barHeight = (count / tallest) * (height - 4);
      top -= barHeight;
      chart.appendChild(
        svg(
          'rect',
          {
            x: index * barWidth + 1,
            y: top,
            width: Math.max(1, barWidth - 2),
            height: barHeight,
            class: `bar status-${status.toLowerCase()}`,
            'data-status': status,
            'data-count': count,
          },
          svg('title', {}, `${from.toLocaleString()} to ${to.toLocaleString()}: ${count} ${status}`),
        ),
      );
    }
  });
  chart.appendChild(svg('text', { x: 0, y: height + axis - 4, class: 'axis' }, new Date(begin).toLocaleString()));
  chart.appendChild(svg('text', { x: width, y: height + axis - 4, class: 'axis', 'text-anchor': 'end' }, new Date(begin + bars * step).toLocaleString()));
  const shown: Record<string, number> = counted?.counts ?? totals;
  const summary = runtimeStatuses.map((status) => `${shown[status] ?? 0} ${status}`).join(', ');
  const readOnly = complete ? '' : counted ? ` (bars: the first ${starts.length} read)` : ` (the first ${starts.length} read only)`;
  const countedPart = counted && !counted.complete ? ' (counted in part)' : '';
  return h(
    'figure',
    { class: 'histogram', 'data-total': starts.length, 'data-step-ms': step, 'data-counted': counted ? 'true' : 'false' },
    h('figcaption', {}, `Starts by status${readOnly}, a bar per ${stepWords}: ${summary}${countedPart}`),
    chart,
    h(
      'ul',
      { class: 'legend' },
      ...runtimeStatuses.map((status) =>
        h('li', {}, h('span', { class: `swatch status-${status.toLowerCase()}`, 'aria-hidden': 'true' }), `${status}: ${shown[status] ?? 0}`),
      ),
    ),
  );
}
