/**
 * What chat shows of a start that waits for approval, the same wherever it shows: how many
 * approvals it still needs, who may give them, until when, every decision made (who, when,
 * through what, why), and the console's page of the request (Teams users decide there: an
 * outgoing webhook's card cannot take a click).
 */
import { approvalOf } from '../approvals';
import type { OrchestrationState } from '../orchestration';
import type { ChatReply } from './chatMessages';

type Approval = NonNullable<ReturnType<typeof approvalOf>>;

/** Most decisions a message lists (the latest): a chat message stays short. */
const decisionsShown = 5;

/** The console's page of one request (console/approvalsView.ts): `#/approvals/<id>`. */
export function approvalPageUrl(appBase: string, id: string): string {
  return `${appBase}/console#/approvals/${encodeURIComponent(id)}`;
}

export function approvalPageLink(appBase: string | undefined, id: string): ChatReply['links'] {
  return appBase ? [{ label: 'Open the approval page', url: approvalPageUrl(appBase, id) }] : [];
}

const approvalsGiven = (approval: Approval) => approval.decisions.filter((decision) => decision.approved).length;

/** Where the approval stands, in words: `waiting: 1 of 2 approvals`. */
export function approvalStanding(approval: Approval): string {
  const given = approvalsGiven(approval);
  if (approval.state !== 'waiting') return approval.state;
  return `waiting: ${given} of ${approval.required} approval${approval.required === 1 ? '' : 's'}`;
}

/** Each decision as a fact: `Approved by slack:T1/U2` — `2026-… (slack-button): reason`. */
export function decisionFacts(approval: Approval): [string, string][] {
  return approval.decisions
    .slice(-decisionsShown)
    .map((decision) => [
      `${decision.approved ? 'Approved' : 'Rejected'} by ${decision.by}`,
      `${decision.at} (${decision.route})${decision.reason ? `: ${decision.reason}` : ''}`,
    ]);
}

/** The facts of an approval: where it stands, who may approve, until when, the decisions. */
export function approvalFacts(approval: Approval): [string, string][] {
  return [
    ['Approval', approvalStanding(approval)],
    ['Approvers', approval.approvers.join(', ')],
    ['Waits until', approval.expiresAt],
    ...decisionFacts(approval),
  ];
}

/** How a waiting request is decided, for the one who reads about it. */
export function howToDecide(id: string): string {
  return `An approver answers \`approve ${id}\` or \`reject ${id} [reason]\` (or decides on the approval page); \`status ${id}\` shows where it stands.`;
}

/** The acknowledgement of a start that waits for approval: nothing was sent upstream yet. */
export function waitingReply(state: OrchestrationState, approval: Approval, appBase: string | undefined): ChatReply {
  return {
    title: `Operation ${state.id} waits for approval`,
    facts: [['Operation', state.name], ...approvalFacts(approval)],
    lines: ['Nothing is sent upstream until it is approved; it ends as not approved if it is rejected or the time runs out.', howToDecide(state.id)],
    links: approvalPageLink(appBase, state.id),
  };
}

/** What a decision did, for the one who made it: recorded, what is still needed, or how it ended. */
export function decisionReply(state: OrchestrationState, appBase: string | undefined): ChatReply {
  const approval = approvalOf(state);
  const facts: [string, string][] = [['Operation', state.name], ['Started by', state.startedBy ?? '-'], ...(approval ? approvalFacts(approval) : [])];
  const links = approvalPageLink(appBase, state.id);
  if (!approval || approval.state === 'approved') {
    return { title: `Approved: operation ${state.id} starts`, facts, lines: [`\`status ${state.id}\` follows it.`], links };
  }
  if (approval.state === 'rejected') return { title: `Rejected: operation ${state.id} will not run`, facts, links };
  if (approval.state === 'expired') return { title: `Operation ${state.id} waited too long: it ended as not approved`, facts, links };
  const missing = approval.required - approvalsGiven(approval);
  return {
    title: `Your approval of operation ${state.id} is recorded`,
    facts,
    lines: [`It still needs ${missing} more approval${missing === 1 ? '' : 's'} from another approver by ${approval.expiresAt}.`],
    links,
  };
}

/** A reply on an operation with its approval, if it needed one: the facts, how to decide while it waits, the page. */
export function withApproval(reply: ChatReply, state: OrchestrationState, appBase: string | undefined): ChatReply {
  const approval = approvalOf(state);
  if (!approval) return reply;
  return {
    ...reply,
    facts: [...(reply.facts ?? []), ...approvalFacts(approval)],
    lines: [...(reply.lines ?? []), ...(approval.state === 'waiting' ? [howToDecide(state.id)] : [])],
    links: approvalPageLink(appBase, state.id),
  };
}
