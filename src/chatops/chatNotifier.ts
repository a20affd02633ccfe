/**
 * The end of an operation started from chat, posted through the orchestration's own outbox (one
 * delivery, retried and resumed like any other) as the chat platform reads it instead of as a
 * CloudEvent.
 *
 * A chat delivery's target is the URL to post to with a fragment saying how (`#chatops=slack`,
 * `#chatops=teams`): a fragment is never sent in a request, the status document shows only a
 * target's origin, and the outbox's one-delivery-per-target rule holds as before. A Slack
 * target also carries when its response_url expires (Slack keeps one 30 minutes and takes 5
 * posts): an end after that goes to SLACK_WEBHOOK_URL instead, and no response_url is posted
 * to more than CHATOPS_RESPONSE_URL_MAX_POSTS times by the whole app (responseUrlPosts.ts: a
 * count shared by the instances in storage).
 */
import { notConfigured } from '../notifications/notificationDispatcher';
import type { Dispatcher } from 'undici';
import { endEventData } from '../orchestration/statusDocument';
import { postDelivery, type CloudEvent, type NotificationSender } from '../notifications/notificationSender';
import type { DeliveryOutcome } from '../orchestration/outbox';
import { traceNotification } from '../telemetry/hooks';
import { operationFacts, slackMessage, teamsMessage, type ChatReply } from './chatMessages';
import { ResponseUrlPosts } from './responseUrlPosts';
import type { UseCounters } from '../storage/useCounters';

export type ChatPlatform = 'slack' | 'teams';

export interface ChatTarget {
  platform: ChatPlatform;
  url: string;
  /** A Slack response_url's expiry (ms since the epoch). */
  untilMs?: number;
}

/** How long Slack keeps a response_url. */
export const responseUrlLifetimeMs = 30 * 60_000;

export function chatTargetUrl(target: ChatTarget): string {
  const url = new URL(target.url);
  url.hash = new URLSearchParams({ chatops: target.platform, ...(target.untilMs === undefined ? {} : { until: String(target.untilMs) }) }).toString();
  return url.toString();
}

export function chatTargetOf(target: string): ChatTarget | undefined {
  const url = new URL(target);
  const fragment = new URLSearchParams(url.hash.slice(1));
  const platform = fragment.get('chatops');
  if (platform !== 'slack' && platform !== 'teams') return undefined;
  const until = Number(fragment.get('until'));
  url.hash = '';
  return { platform, url: url.toString(), ...(Number.isFinite(until) && until > 0 ? { untilMs: until } : {}) };
}

type EndData = ReturnType<typeof endEventData>;

/** The end as a chat reply: what ended, how, and where to read the rest. */
export function endReply(data: EndData): ChatReply {
  const output = data.output as { status?: unknown } | null;
  const { createdTime: _started, ...ended } = data;
  const facts = operationFacts({ ...ended, upstreamStatus: output && typeof output.status === 'number' ? output.status : undefined });
  return { title: `Operation ${data.id} ${data.runtimeStatus.toLowerCase()}`, facts, lines: [`\`status ${data.id}\` shows it again.`] };
}

export interface ChatNotifierOptions {
  /** The CloudEvent sender for every other target; absent without NOTIFY_SIGNING_SECRET. */
  events?: Pick<NotificationSender, 'send'>;
  slackWebhookUrl?: string;
  maxPostsPerResponseUrl: number;
  /** The posts per response_url counted app-wide (storage/useCounters.ts); absent, per instance. */
  postCounts?: Pick<UseCounters, 'take'>;
  /** Most response_urls this instance remembers a count of (the oldest is forgotten past it). */
  maxTracked: number;
  timeoutMs: number;
  now: () => number;
  /** The pool the CloudEvents go out on (deliveryPool): its owner closes it. */
  dispatcher: Dispatcher;
  log?: (line: string) => void;
}

export class ChatNotifier implements Pick<NotificationSender, 'send'> {
  readonly #options: ChatNotifierOptions;
  readonly #posts: ResponseUrlPosts;

  constructor(options: ChatNotifierOptions) {
    this.#options = options;
    this.#posts = new ResponseUrlPosts({
      counts: options.postCounts,
      maxPosts: options.maxPostsPerResponseUrl,
      maxTracked: options.maxTracked,
      now: options.now,
      // eslint-disable-next-line no-console
      log: options.log ?? ((line) => console.log(line)),
    });
  }

  async send(target: string, event: CloudEvent): Promise<DeliveryOutcome> {
    const chat = chatTargetOf(target);
    if (!chat) {
      return this.#options.events ? this.#options.events.send(target, event) : notConfigured;
    }
    const reply = endReply(event.data as EndData);
    if (chat.platform === 'teams') return this.#post(chat.url, event, teamsMessage(reply));
    if (chat.untilMs !== undefined && this.#options.now() > chat.untilMs) {
      const { slackWebhookUrl } = this.#options;
      if (!slackWebhookUrl) return { delivered: false, retriable: false, error: 'response_url expired (30 minutes) and no SLACK_WEBHOOK_URL is set' };
      const { response_type: _ephemeral, ...channelMessage } = slackMessage(reply);
      return this.#post(slackWebhookUrl, event, channelMessage);
    }
    const issuedAt = chat.untilMs === undefined ? undefined : chat.untilMs - responseUrlLifetimeMs;
    if (!(await this.#posts.take(chat.url, issuedAt)))
      return { delivered: false, retriable: false, error: `response_url took its ${this.#options.maxPostsPerResponseUrl} posts` };
    return this.#post(chat.url, event, slackMessage(reply, { replaceOriginal: false }));
  }

  /** One post, a delivery span as a CloudEvent's is (linked to the start), its context in the post's `traceparent`. */
  #post(url: string, event: CloudEvent, message: unknown): Promise<DeliveryOutcome> {
    return traceNotification(url, event, (traceHeaders) =>
      postDelivery(
        this.#options.dispatcher,
        url,
        { ...traceHeaders, 'content-type': 'application/json; charset=utf-8' },
        JSON.stringify(message),
        this.#options.timeoutMs,
      ),
    );
  }
}
