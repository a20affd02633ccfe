/**
 * Certificates: each configured environment with its current thumbprint, expiry and days left,
 * the last attempt and its refusal code; the ones at risk first; a refresh button for a caller
 * allowed to refresh.
 */
import { ApiError, call, type Session } from './api';
import { announce, h, replace, time } from './dom';

interface CertificateRecord {
  projectId: number;
  environmentId: string;
  current: { thumbprint: string; expiresAt: string } | null;
  lastAttempt: { at: string; outcome: string; trigger: string; error?: { code: string; message: string } } | null;
}

interface Row {
  projectId: number;
  environmentId: string;
  record?: CertificateRecord;
  daysLeft?: number;
  atRisk: boolean;
  problem?: string;
}

const dayMs = 86_400_000;

async function rowOf(environment: { projectId: number; environmentId: string }, alertDays: number): Promise<Row> {
  try {
    const record = (await call<CertificateRecord>(`certificates/${environment.projectId}/${encodeURIComponent(environment.environmentId)}`)).body;
    const daysLeft = record.current ? Math.floor((Date.parse(record.current.expiresAt) - Date.now()) / dayMs) : undefined;
    const failed = record.lastAttempt?.outcome === 'failed';
    return { ...environment, record, daysLeft, atRisk: daysLeft === undefined || daysLeft <= alertDays || failed };
  } catch (error) {
    const problem =
      error instanceof ApiError && error.status === 404
        ? 'No certificate fetched yet'
        : error instanceof ApiError
          ? `${error.code}: ${error.message}`
          : String(error);
    return { ...environment, atRisk: true, problem };
  }
}

export function certificatesView(container: HTMLElement, session: Session): () => void {
  const body = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const certificates = session.certificates;
    if (!certificates) return replace(body, h('p', {}, 'The caller may not read certificates (ACCESS_POLICY).'));
    if (certificates.environments.length === 0) return replace(body, h('p', {}, 'No environment is configured (CERT_ENVIRONMENTS).'));
    const rows = await Promise.all(certificates.environments.map((environment) => rowOf(environment, certificates.alertDays)));
    rows.sort((a, b) => Number(b.atRisk) - Number(a.atRisk) || (a.daysLeft ?? -1) - (b.daysLeft ?? -1));
    replace(body, table(rows, certificates.alertDays));
  };
  const refresh = async (button: HTMLButtonElement) => {
    button.disabled = true;
    try {
      const { results } = (await call<{ results: { outcome: string }[] }>('certificates/refresh', { method: 'POST', body: {} })).body;
      const tally = results.reduce<Record<string, number>>((counts, result) => ({ ...counts, [result.outcome]: (counts[result.outcome] ?? 0) + 1 }), {});
      announce(
        `Refreshed: ${Object.entries(tally)
          .map(([outcome, count]) => `${count} ${outcome}`)
          .join(', ')}.`,
      );
      await load();
    } catch (error) {
      announce(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error), 'error');
    } finally {
      button.disabled = false;
    }
  };
  replace(
    container,
    h('h1', {}, 'Certificates'),
    session.may.refreshCertificates
      ? h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: (event) => void refresh(event.currentTarget as HTMLButtonElement) }, 'Refresh every environment'),
        )
      : null,
    body,
  );
  void load();
  return () => undefined;
}

function table(rows: Row[], alertDays: number): HTMLElement {
  const columns = ['Project', 'Environment', 'Thumbprint', 'Expires', 'Days left', 'Last attempt', 'Refusal code', 'Risk'];
  return h(
    'table',
    { class: 'certificates' },
    h('caption', {}, `At risk: within ${alertDays} days of expiry, a failed last attempt, or none fetched. These come first.`),
    h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
    h(
      'tbody',
      {},
      ...rows.map((row) =>
        h(
          'tr',
          { class: row.atRisk ? 'at-risk' : '', 'data-environment': row.environmentId },
          h('td', {}, row.projectId),
          h('td', { class: 'mono' }, row.environmentId),
          h('td', { class: 'mono wrap' }, row.record?.current?.thumbprint ?? '-'),
          h('td', {}, time(row.record?.current?.expiresAt)),
          h('td', {}, row.daysLeft ?? '-'),
          h(
            'td',
            {},
            row.record?.lastAttempt
              ? h('span', {}, time(row.record.lastAttempt.at), ` ${row.record.lastAttempt.outcome} (${row.record.lastAttempt.trigger})`)
              : (row.problem ?? '-'),
          ),
          h('td', { class: 'mono' }, row.record?.lastAttempt?.error?.code ?? '-'),
          h('td', {}, h('span', { class: row.atRisk ? 'badge status-failed' : 'badge status-completed' }, row.atRisk ? 'At risk' : 'OK')),
        ),
      ),
    ),
  );
}
