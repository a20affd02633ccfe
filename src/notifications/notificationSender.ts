/**
 * Tells a target that an orchestration ended: one CloudEvents 1.0 event in structured mode
 * (`application/cloudevents+json`), signed per Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` over `id.timestamp.body`,
 * keyed with `NOTIFY_SIGNING_SECRET`). The signature comes from the specification's own
 * library (`standardwebhooks`), so receivers using any of its libraries verify it as sent.
 *
 * No token is ever sent, no redirect followed (undici's dispatcher follows none), and each
 * attempt has a time budget, on a connection pool of its own.
 */
import { Webhook } from 'standardwebhooks';
import { Agent, type Dispatcher } from 'undici';
import type { DeliveryOutcome } from '../orchestration';
import { traceNotification } from '../telemetry';

export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: unknown;
  /** The CloudEvents distributed tracing extension: the trace context of the start that ended. */
  traceparent?: string;
  tracestate?: string;
}

export const cloudEventContentType = 'application/cloudevents+json; charset=utf-8';

/** `gateway.orchestration.completed`, `.failed` or `.terminated`. */
export function endEventType(runtimeStatus: string): string {
  return `gateway.orchestration.${runtimeStatus.toLowerCase()}`;
}

export interface NotificationSenderOptions {
  /** `whsec_<base64>`. */
  signingSecret: string;
  timeoutMs: number;
  dispatcher?: Dispatcher;
  now?: () => number;
}

/**
 * The connection pool end notices go out on, CloudEvents and chat messages alike (src/services.ts
 * builds one for both): one pool, closed by whoever built it.
 */
export function deliveryPool(): Dispatcher {
  return new Agent({ connections: 8, keepAliveTimeout: 10_000 });
}

/** Answers worth another attempt: the receiver was busy or failing, not refusing. */
const retriableStatuses = new Set([408, 429, 500, 502, 503, 504]);
/** Most bytes of a receiver's answer read: only its status matters. */
const maxAnswerBytes = 16 * 1024;

export class NotificationSender {
  readonly #signer: Webhook;
  readonly #dispatcher: Dispatcher;
  readonly #options: NotificationSenderOptions;

  constructor(options: NotificationSenderOptions) {
    this.#options = options;
    this.#signer = new Webhook(options.signingSecret);
    this.#dispatcher = options.dispatcher ?? deliveryPool();
  }

  /** The headers a receiver verifies, for this event's body at this time. */
  signedHeaders(eventId: string, body: string, atMs: number): Record<string, string> {
    return {
      'content-type': cloudEventContentType,
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(atMs / 1000)),
      'webhook-signature': this.#signer.sign(eventId, new Date(atMs), body),
    };
  }

  send(target: string, event: CloudEvent): Promise<DeliveryOutcome> {
    return traceNotification(target, event, (traceHeaders) => this.#post(target, event, traceHeaders));
  }

  /** One attempt; `traceHeaders` are the delivery span's `traceparent`/`tracestate` (none when nothing is exported). */
  async #post(target: string, event: CloudEvent, traceHeaders: Record<string, string>): Promise<DeliveryOutcome> {
    const body = JSON.stringify(event);
    return postDelivery(
      this.#dispatcher,
      target,
      { ...traceHeaders, ...this.signedHeaders(event.id, body, (this.#options.now ?? Date.now)()) },
      body,
      this.#options.timeoutMs,
    );
  }

  close(): Promise<void> {
    return this.#dispatcher.close();
  }
}

/**
 * One attempt of a delivery: a POST within the time budget, no redirect followed, at most a
 * little of the answer read; the outcome says whether another attempt is worth making. Shared
 * with the chat posts (src/chatops), which go through the same outbox.
 */
export async function postDelivery(
  dispatcher: Dispatcher,
  target: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<DeliveryOutcome> {
  const url = new URL(target);
  try {
    const response = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await response.body.dump({ limit: maxAnswerBytes }).catch(() => undefined);
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { delivered: true };
    const error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    return { delivered: false, retriable: retriableStatuses.has(status), error };
  } catch (error) {
    const name = (error as { name?: string }).name;
    const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
    return { delivered: false, retriable: true, error: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : (code ?? 'connection error') };
  }
}
