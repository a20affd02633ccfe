/**
 * `POST chatops/slack/interactive`: a click on the Approve or Reject button of the approval
 * message (approvalAnnouncements.ts), as Slack's interactivity sends it: a form whose one field
 * `payload` holds JSON (`type: block_actions`, `user.id`, `team.id`, `actions[0].action_id` and
 * `value`, `response_url`), signed as a slash command is. It passes the same checks as a slash
 * command (chatEndpoint.ts: the route on, the body's bound, the signature, its time, replays in
 * this instance and app-wide), then records the decision as `slack:<team>/<user>` through the
 * route `slack-button`, with the same rules as any other decision.
 *
 * The answer comes within Slack's 3 s (SLACK_ACK_BUDGET_MS) whatever storage does. The outcome
 * is also posted to the click's `response_url` (an origin SLACK_RESPONSE_URL_ORIGINS allows):
 * a recorded decision shows the approval message again with the decisions made (for everyone
 * in the channel, its buttons gone once decided); a refusal goes to the clicker alone.
 */
import type { HttpHandler } from '@azure/functions';
import { appBaseOf } from '../../http';
import { framed, type ServicesSource } from '../../http';
import { jsonResponse } from '../../calls';
import type { OrchestrationState } from '../../orchestration';
import type { Services } from '../../services';
import { approvalMessage, postSlackMessage } from './approvalAnnouncements';
import { appRoutes } from '../../routes';
import { decideFromChat } from '../approvalCommands';
import { decisionReply } from '../approvalReplies';
import { after, type ChatCall } from '../chatCall';
import { admitChatRequest, answerChat } from '../chatEndpoint';
import type { SignedChatRequests } from '../chatPlatform';
import { slackMessage } from './slackMessages';
import { uncheckedReply } from '../chatReplays';
import { chatCallerOf, type CallerIdentity } from '../../callers';
import { readSlackClick, type SlackClick } from './slackClickPayload';
import { responseUrlOf, slackFormOf, slackKey, slackSignedAtMs, verifySlack } from './slackCommand';

type VerifiedClick = SlackClick & { caller: CallerIdentity; signedAtMs: number };

const slackClicks: SignedChatRequests<VerifiedClick> = {
  platform: slackKey,
  verify: verifySlack,
  read(services, request, body) {
    const click = readSlackClick(slackFormOf(request, body, 'A Slack click'));

    return {
      ...click,
      responseUrl: responseUrlOf(services, click.responseUrl),
      caller: chatCallerOf(slackKey.name, `${click.team}/${click.user}`),
      signedAtMs: slackSignedAtMs(request),
    };
  },
  answerBudgetMs: (services) => services.config.SLACK_ACK_BUDGET_MS,
};

/** Posts `message` to the click's response_url, waiting no later than the answer's time (the post goes on after it). */
async function showInSlack(
  services: Services,
  responseUrl: string | undefined,
  message: unknown,
  answerBy: number,
  log: (line: string) => void,
): Promise<void> {
  if (!responseUrl) return;
  const posting = postSlackMessage(services, responseUrl, message).then((outcome) => {
    if (!outcome.delivered)
      log(JSON.stringify({ event: 'chatops', step: 'click-answer-not-posted', target: new URL(responseUrl).origin, error: outcome.error }));
  });
  await Promise.race([posting, after(answerBy - services.now(), undefined)]);
}

export const slackClickHandler = (getServices: ServicesSource): HttpHandler =>
  framed(
    appRoutes.chatopsSlackInteractive.name,
    getServices,
    async ({ request, context, services, correlationId, startedMs, record }) => {
      const log = (line: string) => context.error(line);
      const admission = await admitChatRequest(services, slackClicks, request, startedMs, log);
      if (admission.kind === 'check') return { status: 200 };
      const click = admission.chat;
      record.caller = click.caller;
      if (admission.kind === 'unchecked') return jsonResponse(200, slackMessage(uncheckedReply(correlationId)), correlationId);
      const call: ChatCall = {
        services,
        caller: click.caller,
        correlationId,
        appBase: appBaseOf(request.url, appRoutes.chatopsSlackInteractive.route, services.config.APP_PUBLIC_URL),
        answerBy: admission.answerBy,
        endNote: '',
        log,
      };
      let decided: OrchestrationState | undefined;
      const reply = await answerChat(call, record, async () => {
        const state = await decideFromChat(call, click.approved ? { kind: 'approve', id: click.id } : { kind: 'reject', id: click.id }, 'slack-button');
        decided = state;
        return decisionReply(state, call.appBase);
      });
      // A decision recorded: the channel's message again, with it; else the answer to the clicker alone.
      const message = decided ? { replace_original: true, ...approvalMessage(decided, call.appBase) } : slackMessage(reply, { replaceOriginal: false });
      await showInSlack(services, click.responseUrl, message, call.answerBy, log);
      return jsonResponse(200, message, correlationId);
    },
    { chatUser: true },
  );
