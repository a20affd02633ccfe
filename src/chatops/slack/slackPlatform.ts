/**
 * Slack: slash commands to `POST chatops/slack` (slackCommand.ts) and clicks on the approval
 * message to `POST chatops/slack/interactive` (slackClicks.ts), each signed with
 * SLACK_SIGNING_SECRET. The end of a command goes to its response_url while Slack keeps it (30
 * minutes, 5 posts, counted app-wide: responseUrlPosts.ts), then to SLACK_WEBHOOK_URL; a start
 * held for approval is announced to SLACK_APPROVAL_WEBHOOK_URL (approvalAnnouncements.ts).
 */
import { appRoutes } from '../../routes';
import { chatRoute } from '../chatEndpoint';
import type { ChatPlatform, EndSender, EndSenderContext } from '../chatPlatform';
import { slackClickHandler } from './slackClicks';
import { announceApprovalRequest } from './approvalAnnouncements';
import { ResponseUrlPosts } from './responseUrlPosts';
import { responseUrlLifetimeMs, slackCommands, slackKey } from './slackCommand';
import { slackMessage } from './slackMessages';

function slackEndSender({ config, postCounts, now, log }: EndSenderContext): EndSender {
  const maxPosts = config.CHATOPS_RESPONSE_URL_MAX_POSTS;
  const posts = new ResponseUrlPosts({ counts: postCounts, maxPosts, maxTracked: config.CHATOPS_REPLAY_CACHE_SIZE, now, log });
  return {
    async send(target, reply, post) {
      if (target.untilMs !== undefined && now() > target.untilMs) {
        if (!config.SLACK_WEBHOOK_URL)
          return { delivered: false, retriable: false, error: 'response_url expired (30 minutes) and no SLACK_WEBHOOK_URL is set' };
        const { response_type: _ephemeral, ...channelMessage } = slackMessage(reply);
        return post(config.SLACK_WEBHOOK_URL, channelMessage);
      }
      const issuedAt = target.untilMs === undefined ? undefined : target.untilMs - responseUrlLifetimeMs;
      if (!(await posts.take(target.url, issuedAt))) return { delivered: false, retriable: false, error: `response_url took its ${maxPosts} posts` };
      return post(target.url, slackMessage(reply, { replaceOriginal: false }));
    },
  };
}

export const slack: ChatPlatform = {
  ...slackKey,
  title: 'Slack',
  routes: [
    { route: appRoutes.chatopsSlack, handler: chatRoute(slackCommands) },
    { route: appRoutes.chatopsSlackInteractive, handler: slackClickHandler },
  ],
  commands: slackCommands,
  endSender: slackEndSender,
  endOrigins: (config) => config.SLACK_RESPONSE_URL_ORIGINS,
  endsSummary(config) {
    const webhook = config.SLACK_WEBHOOK_URL ? `, after 30 minutes to SLACK_WEBHOOK_URL (${new URL(config.SLACK_WEBHOOK_URL).origin})` : '';
    const approvals = config.SLACK_APPROVAL_WEBHOOK_URL
      ? `; approval requests posted to SLACK_APPROVAL_WEBHOOK_URL (${new URL(config.SLACK_APPROVAL_WEBHOOK_URL).origin}), their clicks to POST chatops/slack/interactive`
      : '';
    return `ends posted to response_urls at ${config.SLACK_RESPONSE_URL_ORIGINS.join(', ')}${webhook}${approvals}`;
  },
  onHeldStart: announceApprovalRequest,
};
