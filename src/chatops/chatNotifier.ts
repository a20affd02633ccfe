/**
 * The end of an operation started from chat, posted through the orchestration's own outbox (one
 * delivery, retried and resumed like any other) as the chat platform reads it instead of as a
 * CloudEvent.
 *
 * A chat delivery's target is the URL to post to with a fragment saying which platform posts
 * to it (`#chatops=<platform>`, chatPlatform.ts): a fragment is never sent in a request, the
 * status document shows only a target's origin, and the outbox's one-delivery-per-target rule
 * holds as before. Each platform's end sender decides how its ends go (slack/: a response_url
 * within its 30 minutes and 5 posts, counted app-wide, then the channel's webhook).
 */
import type { Dispatcher } from 'undici';
import { notConfigured } from '../notifications';
import { postDelivery, type CloudEvent, type NotificationSender } from '../notifications';
import type { DeliveryOutcome } from '../orchestration';
import { endEventData } from '../orchestration';
import { traceNotification } from '../telemetry';
import { operationFacts, type ChatReply } from './chatMessages';
import { chatTargetOf, type EndSender } from './chatPlatform';

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
  /** The end senders of the platforms that are on, by platform name. */
  senders: ReadonlyMap<string, EndSender>;
  timeoutMs: number;
  /** The pool the CloudEvents go out on (deliveryPool): its owner closes it. */
  dispatcher: Dispatcher;
}

export class ChatNotifier implements Pick<NotificationSender, 'send'> {
  readonly #options: ChatNotifierOptions;
  readonly #platforms: string[];

  constructor(options: ChatNotifierOptions) {
    this.#options = options;
    this.#platforms = [...options.senders.keys()];
  }

  async send(target: string, event: CloudEvent): Promise<DeliveryOutcome> {
    const chat = chatTargetOf(target, this.#platforms);
    if (!chat) return this.#options.events ? this.#options.events.send(target, event) : notConfigured;
    return this.#options.senders.get(chat.platform)!.send(chat, endReply(event.data as EndData), (url, message) => this.#post(url, event, message));
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
