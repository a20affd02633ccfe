/**
 * The receiving end of a chat platform for `npm run chat`: a tiny HTTP server on the address of
 * the stand-in (by default http://127.0.0.1:7073, where the documented local chat start points
 * SLACK_RESPONSE_URL_ORIGINS and TEAMS_WORKFLOW_URL). It takes the app's posts of an operation's
 * end, as Slack's response_url and a Teams Workflows webhook would, and answers 200.
 */
import { createServer } from 'node:http';
import { readBody } from './requestBody';

export interface ChatPost {
  path: string;
  /** The message's text (Slack's `text`, the Teams activity's `text`). */
  text: string;
}

export interface ChatStandIn {
  /** The first post `matches` accepts within `timeoutMs`, or undefined. */
  nextPost(matches: (post: ChatPost) => boolean, timeoutMs: number): Promise<ChatPost | undefined>;
  close(): Promise<void>;
}

export class StandInRefused extends Error {}

/** What the stand-in holds: a message's body at most (Slack takes 40,000 characters of text), and the posts it keeps, the latest. */
export interface StandInLimits {
  maxBodyBytes: number;
  maxPosts: number;
}

export async function startChatStandIn(address: URL, limits: StandInLimits = { maxBodyBytes: 256 * 1024, maxPosts: 100 }): Promise<ChatStandIn> {
  const posts: ChatPost[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    void readBody(request, limits.maxBodyBytes).then(
      (body) => {
        if (!body) return; // Cut off: past maxBodyBytes.
        let text = '';
        try {
          text = String((JSON.parse(body.toString('utf8')) as { text?: unknown }).text ?? '');
        } catch {
          // Not a chat message: kept with no text, answered all the same.
        }
        posts.push({ path: request.url ?? '/', text });
        if (posts.length > limits.maxPosts) posts.shift();
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        for (const wake of waiters) wake();
      },
      () => undefined,
    );
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new StandInRefused(
              `${address.host} is in use (another npm run chat waiting for an end?). Wait for it, or give --stand-in another address and name it in the app's SLACK_RESPONSE_URL_ORIGINS and TEAMS_WORKFLOW_URL.`,
            )
          : error,
      ),
    );
    server.listen(Number(address.port || 80), address.hostname, resolve);
  });
  return {
    nextPost(matches, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          const found = posts.find(matches);
          if (!found) return;
          finish(found);
        };
        const timer = setTimeout(() => finish(undefined), timeoutMs);
        const finish = (post: ChatPost | undefined) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(post);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}
