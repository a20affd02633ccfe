/**
 * A Slack stand-in and a Teams stand-in: commands signed exactly as the platforms document
 * (Slack: `v0=` hex HMAC-SHA256 of `v0:<timestamp>:<body>`; Teams: `HMAC <base64 HMAC-SHA256 of
 * the body>` keyed with the base64-decoded token), sent to the app's chat routes. The requests
 * are built as `npm run chat` builds them (tools/chatRequests.ts).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { slackCommandRequest, teamsCommandRequest } from '../../tools/chatRequests';

export { slackSignedHeaders, teamsActivityOf, teamsAuthorization } from '../../tools/chatRequests';

/**
 * The platforms' secrets (new ones each call) and a chat user on each, as a test's app is set up
 * with them: the Slack team is the test's own, so its users name where they come from.
 */
export function chatIdentities(team: string) {
  return {
    slackSecret: randomBytes(16).toString('hex'),
    teamsToken: randomBytes(32).toString('base64'),
    team,
    user: 'UOPS1',
    tenant: 'aaaaaaaa-0000-4000-8000-000000000001',
    teamsUser: 'bbbbbbbb-0000-4000-8000-000000000002',
  };
}

export interface ChatAnswer {
  status: number;
  /** The message's text (Slack's `text`, the Teams activity's `text`). */
  text?: string;
  correlationId?: string;
  /** From sending to the whole answer read. */
  elapsedMs: number;
}

/** Sends a signed chat request to `route` (`slack` or `teams`) and reads its answer. */
export async function sendChat(baseUrl: string, route: 'slack' | 'teams', body: string, headers: Record<string, string>): Promise<ChatAnswer> {
  const sentAt = Date.now();
  const response = await request(`${baseUrl}/api/chatops/${route}`, { method: 'POST', headers, body });
  const answer = (await response.body.json()) as { text?: string };
  const correlationId = response.headers['x-correlation-id'];
  return {
    status: response.statusCode,
    text: answer.text,
    correlationId: typeof correlationId === 'string' ? correlationId : undefined,
    elapsedMs: Date.now() - sentAt,
  };
}

/** A slash command from `team`/`user`, signed with `secret`. */
export function sendSlackCommand(baseUrl: string, secret: string, form: { team: string; user: string; text: string }): Promise<ChatAnswer> {
  const { body, headers } = slackCommandRequest(secret, form);
  return sendChat(baseUrl, 'slack', body, headers);
}

/** An outgoing webhook's activity, signed with `token`. */
export function sendTeamsCommand(baseUrl: string, token: string, activity: { tenant: string; user: string; text: string }): Promise<ChatAnswer> {
  const { body, headers } = teamsCommandRequest(token, activity);
  return sendChat(baseUrl, 'teams', body, headers);
}
