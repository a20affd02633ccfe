/**
 * When the chat routes are on, and what they add to the orchestration's delivery: a platform's
 * route answers only once its secret is set and ACCESS_POLICY names at least one of its users
 * (no rule, no rights: a `*` rule alone never opens a chat route, nor grants a chat user).
 */
import type { Config } from '../settings/config';
import { accessPolicyOf } from '../access/accessPolicy';
import type { Dispatcher } from 'undici';
import type { NotificationSender } from '../notifications/notificationSender';
import { ChatNotifier, type ChatNotifierOptions, type ChatPlatform } from './chatNotifier';

type ChatConfig = Pick<Config, 'ACCESS_POLICY' | 'SLACK_SIGNING_SECRET' | 'TEAMS_WEBHOOK_SECRET'>;

const secretNames = { slack: 'SLACK_SIGNING_SECRET', teams: 'TEAMS_WEBHOOK_SECRET' } as const;

/** Asks the app's parsed policy, as the chat caller's match does, so a route is on only for callers a rule can match. */
export function chatEnabled(config: ChatConfig, platform: ChatPlatform): boolean {
  return config[secretNames[platform]] !== undefined && accessPolicyOf(config).namesKind(`${platform}:`);
}

/** Where the ends of a platform's commands are posted, named without a path or query (a webhook URL holds its token). */
function endsOf(config: Config, platform: ChatPlatform): string {
  if (platform === 'teams')
    return config.TEAMS_WORKFLOW_URL
      ? `ends posted to TEAMS_WORKFLOW_URL (${new URL(config.TEAMS_WORKFLOW_URL).origin})`
      : 'no TEAMS_WORKFLOW_URL: `status <id>` reads the ends';
  const webhook = config.SLACK_WEBHOOK_URL ? `, after 30 minutes to SLACK_WEBHOOK_URL (${new URL(config.SLACK_WEBHOOK_URL).origin})` : '';
  const approvals = config.SLACK_APPROVAL_WEBHOOK_URL
    ? `; approval requests posted to SLACK_APPROVAL_WEBHOOK_URL (${new URL(config.SLACK_APPROVAL_WEBHOOK_URL).origin}), their clicks to POST chatops/slack/interactive`
    : '';
  return `ends posted to response_urls at ${config.SLACK_RESPONSE_URL_ORIGINS.join(', ')}${webhook}${approvals}`;
}

/** The start's line for a platform: on, and where ends go; or off, and what is missing. */
export function chatSummary(config: Config, platform: ChatPlatform): string {
  if (chatEnabled(config, platform)) return `on: POST chatops/${platform}; ${endsOf(config, platform)}`;
  const missing = [
    ...(config[secretNames[platform]] === undefined ? [`${secretNames[platform]} not set`] : []),
    ...(accessPolicyOf(config).namesKind(`${platform}:`) ? [] : [`no ACCESS_POLICY rule names a ${platform}: user`]),
  ];
  return `off (POST chatops/${platform} answers 404): ${missing.join(', ')}`;
}

/** The origins the ends of chat commands go to: Slack's response_url hosts, the Teams workflow's. */
export function chatEndOrigins(config: Config): string[] {
  return [
    ...(chatEnabled(config, 'slack') ? config.SLACK_RESPONSE_URL_ORIGINS : []),
    ...(chatEnabled(config, 'teams') && config.TEAMS_WORKFLOW_URL ? [new URL(config.TEAMS_WORKFLOW_URL).origin] : []),
  ];
}

/** The engine's notifier: chat ends as chat messages on the CloudEvents' pool, every other target as before. */
export function chatNotifierOf(
  config: Config,
  events: NotificationSender | undefined,
  deliveries: Dispatcher,
  postCounts?: ChatNotifierOptions['postCounts'],
): Pick<NotificationSender, 'send'> | undefined {
  if (!chatEnabled(config, 'slack') && !chatEnabled(config, 'teams')) return events;
  return new ChatNotifier({
    events,
    slackWebhookUrl: config.SLACK_WEBHOOK_URL,
    maxPostsPerResponseUrl: config.CHATOPS_RESPONSE_URL_MAX_POSTS,
    postCounts,
    maxTracked: config.CHATOPS_REPLAY_CACHE_SIZE,
    timeoutMs: config.NOTIFY_TIMEOUT_MS,
    now: Date.now,
    dispatcher: deliveries,
  });
}
