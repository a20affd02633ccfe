/**
 * The receiving end of a chat platform on 127.0.0.1: Slack's response_urls and incoming
 * webhooks, a Teams Workflows webhook. It records each JSON post and answers 200, or what
 * `statusFor` says for its path. It never holds the test process open.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatPost {
  path: string;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface ChatPostReceiver {
  origin: string;
  posts: ChatPost[];
  close(): Promise<void>;
}

export async function startChatPostReceiver(statusFor: (path: string) => number = () => 200): Promise<ChatPostReceiver> {
  const posts: ChatPost[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const path = incoming.url ?? '';
      posts.push({ path, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>, headers: incoming.headers });
      response.writeHead(statusFor(path), { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}
