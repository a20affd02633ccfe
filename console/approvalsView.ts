/**
 * Approvals: the starts that wait for approval (an ACCESS_POLICY rule with `approval`), each with
 * who started it, what it acts on, until when it waits, the approvals it still needs and every
 * decision made (who, when, through what, why). A caller that may approve (`may.approve` in the
 * console session) gets Approve, and Reject with a reason; the API judges each decision anyway.
 *
 * The list API has no filter on approvals: the view lists the Pending orchestrations the caller
 * sees (at most CONSOLE_HISTOGRAM_MAX_STARTS, as the orchestrations view reads) and, for an
 * approver, those `GET approvals` names (the ones it may approve, which the list leaves out when
 * they are not its own), and keeps those whose document says `customStatus.approval.state` is
 * `waiting`. `#/approvals/<id>` shows one request, waiting
 * or not (the link chat replies carry), so the one who follows it sees how it was decided.
 */
import { ApiError, call, type Session } from './api';
import { confirmAction } from './confirmDialog';
import { announce, h, replace, time, type Child } from './dom';
import { matchesOf, statusDocumentOf, type StatusDocument } from './orchestrationData';
import { resourceOf } from './resource';

/** What `customStatus.approval` holds (the API's status document). */
interface Approval {
  state: 'waiting' | 'approved' | 'rejected' | 'expired';
  required: number;
  approvers: string[];
  expiresAt: string;
  decisions: { by: string; approved: boolean; reason?: string; at: string; route: string }[];
}

type ApprovalDocument = StatusDocument & { customStatus: { approval?: Approval } | null };

/** The longest reason the form sends (the API bounds it too). */
const maxReasonChars = 500;

const approvalOf = (document: ApprovalDocument): Approval | undefined => document.customStatus?.approval;
const problemText = (error: unknown) => (error instanceof ApiError ? `${error.code}: ${error.message}` : String(error));

/**
 * The documents of `ids`, read a few at a time. One gone meanwhile (purged, 404) is left out; one
 * that could not be read otherwise is named in `problems`, so the view says what it does not show.
 */
async function documentsOf(ids: string[], concurrency = 4): Promise<{ documents: ApprovalDocument[]; problems: string[] }> {
  const documents: ApprovalDocument[] = [];
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      try {
        documents.push((await statusDocumentOf(id)) as ApprovalDocument);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) problems.push(`${id}: ${problemText(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { documents, problems };
}

function decisionsList(approval: Approval): Child {
  if (approval.decisions.length === 0) return 'none yet';
  return h(
    'ul',
    { class: 'decisions' },
    ...approval.decisions.map((decision) =>
      h(
        'li',
        {},
        decision.approved ? 'Approved' : 'Rejected',
        ` by ${decision.by} `,
        time(decision.at),
        ` (${decision.route})`,
        decision.reason ? h('span', { class: 'wrap' }, `: ${decision.reason}`) : null,
      ),
    ),
  );
}

function needed(approval: Approval): string {
  const approvals = approval.decisions.filter((decision) => decision.approved).length;
  if (approval.state !== 'waiting') return approval.state;
  return `${approvals} of ${approval.required}`;
}

export function approvalsView(container: HTMLElement, session: Session, focusId?: string): () => void {
  const mayApprove = session.may.approve === true;
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'false' });
  let left = false;
  /** Each load's number: a slower one that a later one overtook draws nothing. */
  let loads = 0;

  const decide = async (document: ApprovalDocument, approved: boolean, reasonInput?: HTMLInputElement) => {
    const reason = reasonInput?.value.trim() ?? '';
    const question = approved
      ? `Approve ${document.name} (${document.id}), started by ${document.startedBy ?? 'an unknown caller'}? It starts once the approvals it needs are in.`
      : `Reject ${document.name} (${document.id})? It will not run.`;
    if (!(await confirmAction(question, approved ? 'Approve' : 'Reject'))) return;
    try {
      await call(`orchestrations/${encodeURIComponent(document.id)}/raiseEvent/Approval`, {
        method: 'POST',
        body: { approved, ...(reason ? { reason } : {}) },
        // Records the decision as made through the console.
        headers: { 'x-gateway-client': 'console' },
      });
      announce(approved ? 'Approved.' : 'Rejected.');
    } catch (error) {
      announce(problemText(error), 'error');
    }
    await load();
  };

  function actions(document: ApprovalDocument, approval: Approval): Child {
    if (!mayApprove || approval.state !== 'waiting') return '-';
    const reason = h('input', {
      type: 'text',
      maxlength: maxReasonChars,
      'aria-label': `Reason to reject ${document.id}`,
      placeholder: 'Reason (for a rejection)',
    });
    return h(
      'div',
      { class: 'approval-actions', role: 'group', 'aria-label': `Decide on ${document.id}` },
      h('button', { type: 'button', class: 'approve', onclick: () => void decide(document, true) }, 'Approve'),
      reason,
      h('button', { type: 'button', class: 'danger', onclick: () => void decide(document, false, reason) }, 'Reject'),
    );
  }

  function row(document: ApprovalDocument): HTMLElement {
    const approval = approvalOf(document)!;
    const resource = document.input?.path ? resourceOf(document.input.path) : undefined;
    return h(
      'tr',
      { 'data-id': document.id },
      h('td', { class: 'mono' }, h('a', { href: `#/orchestrations/${encodeURIComponent(document.id)}` }, document.id)),
      h('td', {}, document.name),
      h('td', { class: 'wrap' }, resource ? `${resource.name}${resource.group ? ` in ${resource.group}` : ''}` : '-'),
      h('td', {}, document.startedBy ?? '-'),
      h('td', {}, time(document.createdTime)),
      h('td', {}, time(approval.expiresAt)),
      h('td', { class: 'wrap' }, approval.approvers.join(', ')),
      h('td', {}, needed(approval)),
      h('td', {}, decisionsList(approval)),
      h('td', {}, actions(document, approval)),
    );
  }

  function table(documents: ApprovalDocument[]): HTMLElement {
    const columns = ['Id', 'Operation', 'Target', 'Started by', 'Created', 'Waits until', 'Approvers', 'Approvals', 'Decisions', 'Decide'];
    return h(
      'table',
      { class: 'approvals' },
      h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
      h('tbody', {}, ...documents.map(row)),
    );
  }

  async function waiting(): Promise<{ documents: ApprovalDocument[]; problems: string[]; complete: boolean }> {
    const [pending, approvable] = await Promise.all([
      matchesOf({ statuses: ['Pending'], range: 'any', name: '', idPrefix: '' }, session.list.histogramMaxStarts),
      mayApprove ? call<{ value: { id: string }[] }>('approvals').then((answer) => answer.body.value.map((entry) => entry.id)) : Promise.resolve([]),
    ]);
    const { documents, problems } = await documentsOf([...new Set([...approvable, ...pending.entries.map((entry) => entry.id)])]);
    const waitingOnes = documents.filter((document) => approvalOf(document)?.state === 'waiting');
    return { documents: waitingOnes.sort((a, b) => b.createdTime.localeCompare(a.createdTime)), problems, complete: pending.complete };
  }

  async function load(): Promise<void> {
    const mine = ++loads;
    const stale = () => left || mine !== loads;
    body.setAttribute('aria-busy', 'true');
    try {
      if (focusId) {
        const document = (await statusDocumentOf(focusId)) as ApprovalDocument;
        if (stale()) return;
        replace(body, approvalOf(document) ? table([document]) : h('p', {}, `Orchestration ${focusId} does not wait for approval (it never needed one).`));
        return;
      }
      const { documents, problems, complete } = await waiting();
      if (stale()) return;
      replace(
        body,
        problems.length
          ? h('p', { class: 'error', role: 'alert' }, `Not shown, as they could not be read (Refresh tries again): ${problems.join('; ')}`)
          : null,
        complete
          ? null
          : h(
              'p',
              { class: 'read-limit' },
              `More orchestrations are pending than the ${session.list.histogramMaxStarts} the console reads (CONSOLE_HISTOGRAM_MAX_STARTS): some waiting requests may not be shown.`,
            ),
        documents.length === 0 ? h('p', {}, 'No request waits for approval.') : table(documents),
      );
    } catch (error) {
      if (!stale()) replace(body, h('p', { class: 'error', role: 'alert' }, problemText(error)));
    } finally {
      body.setAttribute('aria-busy', 'false');
    }
  }

  replace(
    container,
    focusId ? h('p', {}, h('a', { href: '#/approvals' }, 'All requests waiting for approval')) : null,
    h('h1', {}, focusId ? 'Approval request ' : 'Waiting for approval', focusId ? h('span', { class: 'mono' }, focusId) : null),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
    h(
      'p',
      { class: 'help' },
      mayApprove
        ? 'Starts that an ACCESS_POLICY rule holds for approval. Each starts once it has the approvals it needs; a rejection ends it.'
        : 'Starts that an ACCESS_POLICY rule holds for approval. You are not named as an approver, so you can follow them here but not decide.',
    ),
    body,
  );
  void load();
  return () => {
    left = true;
  };
}
