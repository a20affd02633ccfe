/**
 * The Slack message that asks the approvers' channel to decide on a start: posted once to
 * SLACK_APPROVAL_WEBHOOK_URL (an incoming webhook) when a waiting request is stored, with an
 * Approve and a Reject button whose `value` is the orchestration's id; a click comes back to
 * `POST chatops/slack/interactive` (slackClicks.ts), which shows the message again with the
 * decisions made, its buttons gone once the request is decided.
 *
 * Posts go out as the ends of chat commands do (postDelivery: a time budget of
 * NOTIFY_TIMEOUT_MS, no redirect followed, a little of the answer read), on a pool of their own
 * made as the delivery pool is. The webhook's URL holds its token in the path: it is never logged
 * (a failure names its origin) and never put in a message.
 */
import type { Dispatcher } from 'undici';
import { approvalOf } from '../../approvals';
import { deliveryPool, postDelivery } from '../../notifications';
import type { DeliveryOutcome } from '../../orchestration';
import type { OrchestrationState } from '../../orchestration';
import type { Services } from '../../services';
import { approvalFacts, approvalPageLink } from '../approvalReplies';
import type { ChatReply } from '../chatMessages';
import { chatEnabled } from '../chatSettings';
import { slackKey } from './slackCommand';
import { slackMessage } from './slackMessages';
import { approvalActions } from './slackClickPayload';

let pool: Dispatcher | undefined;

/** One post of a Slack message (JSON) to a webhook or a response_url: never throws, says how it went. */
export function postSlackMessage(services: Services, url: string, message: unknown): Promise<DeliveryOutcome> {
  pool ??= deliveryPool();
  return postDelivery(pool, url, { 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(message), services.config.NOTIFY_TIMEOUT_MS);
}

const titles = {
  waiting: (state: OrchestrationState) => `${state.startedBy ?? 'A caller'} asks to run ${state.name}: it waits for approval`,
  approved: (state: OrchestrationState) => `${state.name} (${state.id}) was approved`,
  rejected: (state: OrchestrationState) => `${state.name} (${state.id}) was rejected: it will not run`,
  expired: (state: OrchestrationState) => `${state.name} (${state.id}) waited too long: it ended as not approved`,
};

/** The approval message as the channel sees it: the request, where it stands, and the buttons while it waits. */
export function approvalMessage(state: OrchestrationState, appBase: string | undefined) {
  const approval = approvalOf(state);
  const standing = approval?.state ?? 'approved';
  const reply: ChatReply = {
    title: titles[standing](state),
    facts: [['Operation', state.name], ['Id', state.id], ['Target', state.input.path], ...(approval ? approvalFacts(approval) : [])],
    lines:
      standing === 'waiting'
        ? [`Decide with the buttons, or answer \`approve ${state.id}\` or \`reject ${state.id} <reason>\` (a reason goes with the command).`]
        : [],
    links: approvalPageLink(appBase, state.id),
  };
  const { response_type: _ephemeral, ...message } = slackMessage(reply);
  if (standing !== 'waiting') return message;
  const button = (action: keyof typeof approvalActions, text: string, style: 'primary' | 'danger') => ({
    type: 'button',
    action_id: approvalActions[action],
    text: { type: 'plain_text', text },
    style,
    value: state.id,
  });
  return {
    ...message,
    blocks: [
      ...message.blocks,
      { type: 'actions', block_id: 'approval', elements: [button('approve', 'Approve', 'primary'), button('reject', 'Reject', 'danger')] },
    ],
  };
}

/**
 * Posts the approval message of a request just stored as waiting, when Slack chat-ops is on (its
 * buttons need the interactive route) and SLACK_APPROVAL_WEBHOOK_URL is set. Best effort: bounded
 * by NOTIFY_TIMEOUT_MS, never throws; a failure is one log line naming the webhook's origin only.
 */
export async function announceApprovalRequest(services: Services, state: OrchestrationState): Promise<void> {
  const { config } = services;
  const webhook = config.SLACK_APPROVAL_WEBHOOK_URL;
  if (!webhook || !chatEnabled(config, slackKey) || approvalOf(state)?.state !== 'waiting') return;
  let problem: string | undefined;
  try {
    const outcome = await postSlackMessage(services, webhook, approvalMessage(state, state.appBase ?? config.APP_PUBLIC_URL));
    if (!outcome.delivered) problem = outcome.error;
  } catch (thrown) {
    // The message is built from the state: a failure here names its kind, never a URL.
    problem = (thrown as { name?: string }).name ?? 'Error';
  }
  if (problem === undefined) return;
  console.error(
    JSON.stringify({
      event: 'approval',
      step: 'announce-failed',
      id: state.id,
      target: new URL(webhook).origin,
      error: problem,
      detail:
        'The approval request was not posted to SLACK_APPROVAL_WEBHOOK_URL: approvers still see it with `status <id>`, in the console and through the API.',
    }),
  );
}
