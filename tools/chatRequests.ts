/**
 * A chat command as its platform sends it: a Slack slash command's form and a Teams outgoing
 * webhook's activity, signed with the signatures the app itself checks
 * (src/chatops/requestSignatures.ts). `npm run chat` (tools/chat.ts) sends them, and so do the
 * tests' Slack and Teams stand-ins.
 *
 * `localChat` holds what the documented local chat start (docs/chatops.md, "Try it locally") sets:
 * the secrets, the users its ACCESS_POLICY names and the stand-in's address.
 */
import { slackSignatureOf } from '../src/chatops';
import { teamsSignatureOf } from '../src/chatops';

export const localChat = {
  slackSigningSecret: 'local-slack-signing-secret-0001',
  teamsWebhookSecret: 'bG9jYWwgdGVhbXMgb3V0Z29pbmcgd2ViaG9vayB0b2tlbg==',
  slackUser: 'T0LOCAL/U0LOCAL',
  teamsUser: '11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222',
  /** Where the local start's SLACK_RESPONSE_URL_ORIGINS and TEAMS_WORKFLOW_URL point. */
  standIn: 'http://127.0.0.1:7073',
};

export interface SignedChatRequest {
  /** The route under the app's base: `chatops/slack` or `chatops/teams`. */
  route: 'chatops/slack' | 'chatops/teams';
  headers: Record<string, string>;
  body: string;
}

export function slackSignedHeaders(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignatureOf(secret, String(timestamp), body),
  };
}

export function teamsAuthorization(token: string, body: string): string {
  return `HMAC ${teamsSignatureOf(token, body)}`;
}

/** A slash command's form, as Slack posts it (`team_id`, `user_id`, `text`, `response_url`, …). */
export function slackFormOf(form: { team: string; user: string; text: string; responseUrl?: string }): string {
  return new URLSearchParams({
    team_id: form.team,
    user_id: form.user,
    command: '/gateway',
    text: form.text,
    ...(form.responseUrl === undefined ? {} : { response_url: form.responseUrl }),
  }).toString();
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

/** A slash command from `team`/`user`, signed with `secret`. */
export function slackCommandRequest(secret: string, form: Parameters<typeof slackFormOf>[0]): SignedChatRequest {
  const body = slackFormOf(form);
  return { route: 'chatops/slack', headers: slackSignedHeaders(secret, body), body };
}

/** An outgoing webhook's activity, signed with `token`. */
export function teamsCommandRequest(token: string, activity: { tenant: string; user: string; text: string }): SignedChatRequest {
  const body = teamsActivityOf(activity.text, activity.tenant, activity.user);
  return { route: 'chatops/teams', headers: { 'content-type': 'application/json', authorization: teamsAuthorization(token, body) }, body };
}
