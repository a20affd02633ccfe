/**
 * A Slack stand-in and a Teams stand-in: commands signed exactly as the platforms document
 * (Slack: `v0=` hex HMAC-SHA256 of `v0:<timestamp>:<body>`; Teams: `HMAC <base64 HMAC-SHA256 of
 * the body>` keyed with the base64-decoded token), sent to the app's chat routes.
 */
import { createHmac } from 'node:crypto';
import { request } from 'undici';

export function slackSignedHeaders(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
}

export function teamsAuthorization(token: string, body: string): string {
  return `HMAC ${createHmac('sha256', Buffer.from(token, 'base64')).update(body).digest('base64')}`;
}

/** A Teams outgoing webhook's activity: `text` after the mention, from `user` of `tenant`. */
export function teamsActivityOf(text: string, tenant: string, user: string, timestamp = new Date().toISOString()): string {
  return JSON.stringify({
    type: 'message',
    id: String(Date.now()),
    timestamp,
    serviceUrl: 'https://smba.trafficmanager.net/emea/',
    channelId: 'msteams',
    from: { id: '29:1abc', name: 'Ops', aadObjectId: user },
    conversation: { isGroup: true, id: '19:chan@thread.skype;messageid=1', tenantId: tenant },
    text: `<at>Gateway</at>&nbsp;${text}`,
    channelData: { teamsChannelId: '19:chan@thread.skype', teamsTeamId: '19:team@thread.skype', tenant: { id: tenant } },
  });
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
  return { status: response.statusCode, text: answer.text, correlationId: typeof correlationId === 'string' ? correlationId : undefined, elapsedMs: Date.now() - sentAt };
}

/** A slash command from `team`/`user`, signed with `secret`. */
export function sendSlackCommand(baseUrl: string, secret: string, form: { team: string; user: string; text: string }): Promise<ChatAnswer> {
  const body = new URLSearchParams({ team_id: form.team, user_id: form.user, text: form.text, command: '/gateway' }).toString();
  return sendChat(baseUrl, 'slack', body, slackSignedHeaders(secret, body));
}

/** An outgoing webhook's activity, signed with `token`. */
export function sendTeamsCommand(baseUrl: string, token: string, activity: { tenant: string; user: string; text: string }): Promise<ChatAnswer> {
  const body = teamsActivityOf(activity.text, activity.tenant, activity.user);
  return sendChat(baseUrl, 'teams', body, { 'content-type': 'application/json', authorization: teamsAuthorization(token, body) });
}
