/**
 * One decision on a start that waits for approval, whichever route it came through (the API,
 * the console, a chat command, a Slack button): who may decide, the record of it (in the status
 * document and in the log), and, once approved, the send made at once where the app holds a
 * token (the poller makes it otherwise, or a crash interrupted this one).
 */
import { matchesAny } from '../access';
import { GatewayError } from '../errors';
import type { CallerIdentity } from '../callers';
import { deciderOf, identitiesOf, sameCaller, starterOf } from './approvalIdentities';
import type { ApprovalRoute, ApprovalStatus } from '../orchestration';
import { awaitsSend } from './approvalTransitions';
import { isActive, type OrchestrationState } from '../orchestration';
import { sanitizeText } from '../rules';
import type { AccessPolicy } from '../access';
import type { OrchestrationEngine } from '../orchestration';
import type { TokenSource } from '../upstream';
import type { Approvals } from './approvals';

/** What a decision works with: the app's services (src/services.ts) hold these. */
export interface DecisionServices {
  access: { policy: AccessPolicy };
  approvals: Pick<Approvals, 'decide'>;
  orchestrations: Pick<OrchestrationEngine, 'advance' | 'get'>;
  tokens: Pick<TokenSource, 'mode'>;
  backgroundToken(upstream: 'management'): Promise<string | undefined>;
  now(): number;
}

export type { ApprovalRoute, ApprovalStatus } from '../orchestration';

/** The longest reason a decision carries (it is shown in the status document and the end notification). */
export const maxReasonChars = 500;

export interface ApprovalDecisionRequest {
  approved: boolean;
  reason?: string;
  route: ApprovalRoute;
}

/** The approval a start waits for or waited for, if it needed one. */
export function approvalOf(state: OrchestrationState): ApprovalStatus | undefined {
  return state.customStatus?.approval;
}

/** Whether some rule names the caller as an approver. */
export function mayApprove(services: Pick<DecisionServices, 'access'>, caller: CallerIdentity): boolean {
  return services.access.policy.namesApprover(caller);
}

/** Whether the caller is one `approval` lets decide (it may still be the starter). */
function namedApprover(caller: CallerIdentity, approval: ApprovalStatus | undefined): boolean {
  return approval !== undefined && matchesAny(caller, approval.approvers);
}

const notAllowed = (message: string) => new GatewayError('ApprovalNotAllowed', message, { target: 'id' });

/**
 * Throws unless `caller` may decide `state` now: 404 when it may not see it (neither its own,
 * nor in its `admin` scopes, nor one it is named to approve), 410 once it ended or expired, 409
 * when it does not wait (any more) or the caller decided it already, 403 for the starter itself
 * and a caller the request's approvers do not name. The caller is the starter, or an earlier
 * decider, when it shares any name with it (approvalIdentities.ts), not only its first one.
 * Judged again on each try of the decision's conditional write, with the time of that try.
 */
export function judgeDecision(services: DecisionServices, caller: CallerIdentity, state: OrchestrationState): void {
  const approval = approvalOf(state);
  const named = namedApprover(caller, approval);
  if (!named && !services.access.policy.maySee(caller, { startedBy: state.startedBy, target: state.input.path }))
    throw new GatewayError('NotFound', `No orchestration ${state.id}.`, { target: 'id' });
  if (!isActive(state)) {
    throw new GatewayError(
      'OrchestrationEnded',
      `Orchestration ${state.id} already ended (${state.runtimeStatus}${state.endedTime ? ` at ${state.endedTime}` : ''}): there is nothing to decide. Read its outcome with GET orchestrations/${state.id}.`,
      { target: 'id' },
    );
  }
  if (!approval)
    throw new GatewayError('Conflict', `Orchestration ${state.id} does not wait for approval: no rule asked for one when it started.`, { target: 'id' });
  if (approval.state !== 'waiting')
    throw new GatewayError('Conflict', `Orchestration ${state.id} no longer waits for approval (${approval.state}): it is sent upstream, or it was.`, {
      target: 'id',
    });
  if (services.now() >= Date.parse(approval.expiresAt)) {
    throw new GatewayError(
      'ApprovalExpired',
      `Orchestration ${state.id} expired at ${approval.expiresAt}: it waits for no decision any more and is never sent. Start it again to ask for approval anew.`,
      { target: 'id' },
    );
  }
  const identities = identitiesOf(caller);
  if (sameCaller(identities, starterOf(approval, state.startedBy))) {
    throw notAllowed(
      `The caller (${caller.primary}) started orchestration ${state.id}, under this or another of its names: a start is approved by others, never by its starter.`,
    );
  }
  if (!named)
    throw notAllowed(
      `The caller (${caller.primary}) is not among the approvers of orchestration ${state.id} (${approval.approvers.join(', ')}); ask one of them.`,
    );
  const earlier = approval.decisions.find((decision) => sameCaller(identities, deciderOf(decision)));
  if (earlier) {
    throw new GatewayError(
      'Conflict',
      `The caller (${caller.primary}) decided orchestration ${state.id} already, as ${earlier.by}: each approver decides once, under whichever name.`,
      { target: 'id' },
    );
  }
}

/** A reason as it is kept: trimmed, bounded, without tokens or query strings (sanitizeText). */
function reasonOf(reason: string | undefined): string | undefined {
  const trimmed = reason?.trim();
  if (!trimmed) return undefined;
  if (trimmed.length > maxReasonChars) {
    throw new GatewayError('InvalidRequest', `The reason is ${trimmed.length} characters long; at most ${maxReasonChars} are kept. Shorten it.`, {
      target: 'reason',
    });
  }
  return sanitizeText(trimmed);
}

/**
 * Records one decision by `caller` on the waiting request `id`. Throws GatewayError: 404
 * NotFound when the caller may not see it; 403 (code ApprovalNotAllowed) when it may see it
 * but not approve it (the starter itself, a caller outside `approvers` or outside the rule's
 * scopes); 410 OrchestrationEnded once it ended, ApprovalExpired once its expiry passed; 409 when
 * it no longer waits (already approved) or the caller (under any of its names) decided it already.
 * Returns the state after the decision.
 */
export async function decideApproval(
  services: DecisionServices,
  caller: CallerIdentity,
  id: string,
  decision: ApprovalDecisionRequest,
): Promise<OrchestrationState> {
  const reason = reasonOf(decision.reason);
  const made = { by: caller.primary, identities: identitiesOf(caller), approved: decision.approved, route: decision.route, ...(reason ? { reason } : {}) };
  let state = await services.approvals.decide(id, made, (current) => judgeDecision(services, caller, current));
  // The log names who decided what, never the reason (free text, kept in the document).
  // eslint-disable-next-line no-console
  console.log(
    approvalRecord({
      id,
      name: state.name,
      caller: caller.primary,
      approved: decision.approved,
      route: decision.route,
      standing: approvalOf(state)?.state,
      runtimeStatus: state.runtimeStatus,
    }),
  );
  if (awaitsSend(state) && services.tokens.mode !== 'passthrough') state = await sendNow(services, state);
  return state;
}

/**
 * Sends an approved start at once with the app's token, rather than at the next poller run.
 * A failure here is the poller's to carry on: the start stays approved, its key due.
 */
async function sendNow(services: DecisionServices, state: OrchestrationState): Promise<OrchestrationState> {
  try {
    const token = await services.backgroundToken('management');
    if (token === undefined || !(await services.orchestrations.advance(state.id, { token }))) return state;
    return (await services.orchestrations.get(state.id)) ?? state;
  } catch (error) {
    console.error(
      JSON.stringify({
        event: 'approval',
        step: 'send-deferred',
        id: state.id,
        code: (error as GatewayError).code ?? 'InternalError',
        detail: 'The next poller run sends it.',
      }),
    );
    return state;
  }
}

/**
 * The record of one decision on a start waiting for approval, whichever route made it: who, which
 * way, through what, and where the start stands after it. Never the reason (free text, kept in
 * the status document and told in the end notification).
 */
export function approvalRecord(record: {
  id: string;
  name: string;
  caller: string;
  approved: boolean;
  route: string;
  standing?: string;
  runtimeStatus: string;
}): string {
  return JSON.stringify({ event: 'approval', ...record });
}
