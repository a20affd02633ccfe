/**
 * When the chat routes are on, and what they add to the orchestration's delivery: a platform's
 * route answers only once its secret is set and ACCESS_POLICY names at least one of its users
 * (no rule, no rights: a `*` rule alone never opens a chat route, nor grants a chat user).
 */
import type { Config } from '../config';
import { accessPolicyOf } from '../access/accessPolicy';
import type { Dispatcher } from 'undici';
import type { NotificationSender } from '../orchestration/notificationSender';
import { ChatNotifier, type ChatPlatform } from './chatNotifier';

type ChatConfig = Pick<Config, 'ACCESS_POLICY' | 'SLACK_SIGNING_SECRET' | 'TEAMS_WEBHOOK_SECRET'>;

/** Asks the app's parsed policy, as the chat caller's match does, so a route is on only for callers a rule can match. */
export function chatEnabled(config: ChatConfig, platform: ChatPlatform): boolean {
  const secret = platform === 'slack' ? config.SLACK_SIGNING_SECRET : config.TEAMS_WEBHOOK_SECRET;
  return secret !== undefined && accessPolicyOf(config).namesKind(`${platform}:`);
}

/** The origins the ends of chat commands go to: Slack's response_url hosts, the Teams workflow's. */
export function chatEndOrigins(config: Config): string[] {
  return [
    ...(chatEnabled(config, 'slack') ? config.SLACK_RESPONSE_URL_ORIGINS : []),
    ...(chatEnabled(config, 'teams') && config.TEAMS_WORKFLOW_URL ? [new URL(config.TEAMS_WORKFLOW_URL).origin] : []),
  ];
}

/** The engine's notifier: chat ends as chat messages on the CloudEvents' pool, every other target as before. */
export function chatNotifierOf(config: Config, events: NotificationSender | undefined, deliveries: Dispatcher): Pick<NotificationSender, 'send'> | undefined {
  if (!chatEnabled(config, 'slack') && !chatEnabled(config, 'teams')) return events;
  return new ChatNotifier({
    events,
    slackWebhookUrl: config.SLACK_WEBHOOK_URL,
    maxPostsPerResponseUrl: config.CHATOPS_RESPONSE_URL_MAX_POSTS,
    maxTracked: config.CHATOPS_REPLAY_CACHE_SIZE,
    timeoutMs: config.NOTIFY_TIMEOUT_MS,
    now: Date.now,
    dispatcher: deliveries,
  });
}
