/** Health: the app's report (GET health), what is degraded first. */
import { ApiError, call } from './api';
import { h, replace, time } from './dom';

interface HealthReport {
  status: string;
  version: string;
  checkedAt: string;
  dependencies: Record<string, { ok: boolean; detail: string; durationMs: number }>;
  certificates?: {
    environments?: number;
    error?: string;
    atRisk?: { projectId: number; environmentId: string; daysLeft: number | null; lastErrorCode?: string; alert: boolean }[];
  };
  upstreamBudget?: Record<string, { remaining: number; seenAt: string }>;
}

export function healthView(container: HTMLElement): () => void {
  const load = async () => {
    try {
      draw((await call<HealthReport>('health')).body);
    } catch (error) {
      replace(
        container,
        h('h1', {}, 'Health'),
        h('p', { class: 'error', role: 'alert' }, error instanceof ApiError ? `${error.code}: ${error.message}` : String(error)),
      );
    }
  };
  function draw(report: HealthReport) {
    const dependencies = Object.entries(report.dependencies ?? {}).sort(([, a], [, b]) => Number(a.ok) - Number(b.ok));
    const atRisk = report.certificates?.atRisk ?? [];
    replace(
      container,
      h('h1', {}, 'Health ', h('span', { class: `badge ${report.status === 'Healthy' ? 'status-completed' : 'status-failed'}` }, report.status)),
      h(
        'p',
        {},
        `Version ${report.version}, checked `,
        time(report.checkedAt),
        ' ',
        h('button', { type: 'button', onclick: () => void load() }, 'Check again'),
      ),
      h('h2', {}, 'Dependencies'),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, ...['Dependency', 'State', 'Detail', 'Took'].map((column) => h('th', { scope: 'col' }, column)))),
        h(
          'tbody',
          {},
          ...dependencies.map(([name, dependency]) =>
            h(
              'tr',
              { class: dependency.ok ? '' : 'at-risk' },
              h('td', {}, name),
              h('td', {}, dependency.ok ? 'answers' : 'DEGRADED'),
              h('td', { class: 'wrap' }, dependency.detail),
              h('td', {}, `${dependency.durationMs} ms`),
            ),
          ),
        ),
      ),
      report.certificates
        ? h(
            'section',
            {},
            h('h2', {}, 'Certificates running out'),
            report.certificates.error
              ? h('p', { class: 'error' }, `Unknown: ${report.certificates.error}`)
              : atRisk.length === 0
                ? h('p', {}, `None of ${report.certificates.environments ?? 0} environments.`)
                : h(
                    'ul',
                    {},
                    ...atRisk.map((risk) =>
                      h(
                        'li',
                        {},
                        `Project ${risk.projectId}, environment ${risk.environmentId}: ${risk.daysLeft ?? '?'} days left, last refusal ${risk.lastErrorCode ?? '-'}${risk.alert ? ' (alert)' : ''}`,
                      ),
                    ),
                  ),
          )
        : null,
      report.upstreamBudget
        ? h(
            'section',
            {},
            h('h2', {}, "The upstream's budget"),
            h(
              'ul',
              {},
              ...Object.entries(report.upstreamBudget).map(([name, budget]) => h('li', {}, `${name}: ${budget.remaining} left, seen `, time(budget.seenAt))),
            ),
          )
        : null,
    );
  }
  void load();
  return () => undefined;
}
