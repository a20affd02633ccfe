/**
 * A notification receiver on 127.0.0.1, as a chat-ops bot would run one: it verifies each
 * delivery's Standard Webhooks signature with nothing but node:crypto (the snippet of docs/notifications.md),
 * reads the CloudEvent with the CloudEvents SDK, and answers what the test scripts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP, type CloudEvent } from 'cloudevents';

/** The receiver's check, as docs/notifications.md gives it: the secret's key, `id.timestamp.body`, HMAC-SHA256, five minutes' tolerance. */
export function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string, nowSeconds = Date.now() / 1000): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'));
  return signatures.split(' ').some((entry) => {
    const [version, signature = ''] = entry.split(',');
    return version === 'v1' && signature.length === expected.length && timingSafeEqual(Buffer.from(signature), expected);
  });
}

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
  event?: CloudEvent<unknown>;
  /** Why the CloudEvents SDK refused it, if it did. */
  eventProblem?: string;
}

export interface ScriptedReply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Answers only once this settles (after `delayMs`): a slow answer with nothing timed. */
  answerAfter?: PromiseLike<unknown>;
}

export interface WebhookReceiver {
  url: string;
  origin: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret: string, reply: (attempt: number) => ScriptedReply = () => ({ status: 204 })): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const delivery: Delivery = { headers: request.headers, body, verified: verifyStandardWebhook(secret, request.headers, body) };
      try {
        const event = HTTP.toEvent({ headers: request.headers, body }) as CloudEvent<unknown>;
        event.validate();
        delivery.event = event;
      } catch (error) {
        delivery.eventProblem = String(error);
      }
      deliveries.push(delivery);
      const scripted = reply(deliveries.length);
      // A long delay stands for a receiver that hangs: it must not keep the test process alive.
      setTimeout(() => {
        void Promise.resolve(scripted.answerAfter).then(() => {
          if (!response.destroyed) response.writeHead(scripted.status, scripted.headers).end();
        });
      }, scripted.delayMs ?? 0).unref();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/hooks/gateway?route=ops`,
    origin,
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

export interface DarkReceiver {
  url: string;
  origin: string;
  /** The `webhook-id` of every request it took, in order. */
  eventIds: string[];
  close(): Promise<void>;
}

/**
 * A receiver gone dark: it accepts every connection and reads every request, and never answers.
 * It stops by itself after `lifetimeMs`, should a test forget it.
 */
export async function startDarkReceiver(lifetimeMs = 120_000): Promise<DarkReceiver> {
  const eventIds: string[] = [];
  const server: Server = createServer((request) => {
    eventIds.push(String(request.headers['webhook-id']));
    request.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
  setTimeout(() => void close(), lifetimeMs).unref();
  return { url: `${origin}/hooks/dark`, origin, eventIds, close };
}
