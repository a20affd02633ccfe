/**
 * `approve <id>` and `reject <id> [reason]`, typed in Slack or Teams or clicked on the Slack
 * approval message: one decision by the chat user, judged and recorded by the approvals' own
 * decision function as any other (who may approve, not the starter, not twice, not once ended).
 * Its refusals come back as GatewayErrors, which the chat answers in words.
 */
import { decideApproval, type ApprovalRoute } from '../approvals';
import { decisionReply } from './approvalReplies';
import type { ChatCall } from './chatCall';
import type { ChatReply } from './chatMessages';
import type { ChatCommand } from './commandGrammar';
import type { OrchestrationState } from '../orchestration';

export type DecisionCommand = Extract<ChatCommand, { kind: 'approve' | 'reject' }>;

type ChatRoute = Extract<ApprovalRoute, 'chat-command' | 'slack-button'>;

/** The decision recorded; the request's state after it. */
export function decideFromChat(call: ChatCall, command: DecisionCommand, route: ChatRoute): Promise<OrchestrationState> {
  const decision = command.kind === 'approve' ? { approved: true, route } : { approved: false, route, ...(command.reason ? { reason: command.reason } : {}) };
  return decideApproval(call.services, call.caller, command.id, decision);
}

export async function runApprovalCommand(call: ChatCall, command: DecisionCommand, route: ChatRoute): Promise<ChatReply> {
  return decisionReply(await decideFromChat(call, command, route), call.appBase);
}
