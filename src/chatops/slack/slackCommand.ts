/**
 * `POST chatops/slack`: a Slack slash command (`application/x-www-form-urlencoded`: `team_id`,
 * `user_id`, `text`, `response_url`, …), signed with the app's signing secret. The answer is
 * the ephemeral message Slack shows the user (HTTP 200 within 3 s); an operation's end is
 * posted to the command's `response_url`, an origin SLACK_RESPONSE_URL_ORIGINS allows.
 */
import type { HttpRequest } from '@azure/functions';
import { chatCallerOf } from '../../callers';
import { GatewayError } from '../../errors';
import { orchestrationSettingsOf } from '../../orchestration';
import type { Services } from '../../services';
import { chatTargetUrl, type ChatPlatformHandler, type ChatPlatformKey } from '../chatPlatform';
import { slackMessage } from './slackMessages';
import { verifySlackRequest } from './slackSignature';

/** Slack among the platforms (slackPlatform.ts is the whole of it). */
export const slackKey: ChatPlatformKey = { name: 'slack', secretSetting: 'SLACK_SIGNING_SECRET' };

/** How long Slack keeps a response_url. */
export const responseUrlLifetimeMs = 30 * 60_000;

/** A Slack team or user id as Slack writes it. */
export const slackId = /^[A-Z0-9]{1,32}$/;

/** The longest an operation a command starts may run (its deadline), to say where its end will go. */
function longestRunMs(services: Services): number {
  const { deadlineMs, defaultDeadlineMs } = orchestrationSettingsOf(services.config);
  return deadlineMs.ApiManagementService_MigrateToStv2 ?? defaultDeadlineMs;
}

/** A response_url on an origin SLACK_RESPONSE_URL_ORIGINS allows, else none. */
export function responseUrlOf(services: Services, value: string | null | undefined): string | undefined {
  if (!value || value.length > 2048) return undefined;
  try {
    const url = new URL(value);
    return services.config.SLACK_RESPONSE_URL_ORIGINS.includes(url.origin) && !url.username && !url.password && !url.hash ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

function endNoteOf(services: Services, responseUrl: string | undefined): string {
  if (!responseUrl) return 'No reply link came with the command: `status <id>` reads the end.';
  if (longestRunMs(services) <= responseUrlLifetimeMs) return 'Its end will be posted here.';
  return services.config.SLACK_WEBHOOK_URL
    ? 'Its end will be posted here, or to the channel webhook if it comes after the 30 minutes Slack keeps this reply.'
    : 'Its end will be posted here if it comes within the 30 minutes Slack keeps this reply; after that, `status <id>` reads it.';
}

/** Slack's signature on a request to any of its routes (slash commands, clicks), with the signing secret. */
export const verifySlack: ChatPlatformHandler['verify'] = (services, request, body) =>
  verifySlackRequest(
    services.config.SLACK_SIGNING_SECRET!,
    { timestamp: request.headers.get('x-slack-request-timestamp'), signature: request.headers.get('x-slack-signature') },
    body,
    services.now(),
    services.config.CHATOPS_TIMESTAMP_TOLERANCE_SECONDS,
  );

/** The time Slack signed a request at (ms), checked by verifySlack (digits, within the tolerance) and signed: the same for every copy. */
export const slackSignedAtMs = (request: HttpRequest): number => Number(request.headers.get('x-slack-request-timestamp')) * 1000;

/** The form Slack posts (a slash command, a click), refused in `what`'s name when it is not one. */
export function slackFormOf(request: HttpRequest, body: Buffer, what: string): URLSearchParams {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '')) {
    throw new GatewayError('UnsupportedMediaType', `${what} comes as application/x-www-form-urlencoded.`);
  }
  return new URLSearchParams(body.toString('utf8'));
}

export const slackCommands: ChatPlatformHandler = {
  platform: slackKey,
  verify: verifySlack,
  // Slack checks the certificate of a command's URL with a signed `ssl_check=1` and expects a 200.
  isCheck: (body) => new URLSearchParams(body.toString('utf8')).get('ssl_check') === '1',
  read(services, request, body) {
    const form = slackFormOf(request, body, 'A slash command');
    const team = form.get('team_id') ?? '';
    const user = form.get('user_id') ?? '';
    if (!slackId.test(team) || !slackId.test(user)) throw new GatewayError('InvalidRequest', 'A slash command names its team_id and user_id.');
    const responseUrl = responseUrlOf(services, form.get('response_url'));
    return {
      caller: chatCallerOf(slackKey.name, `${team}/${user}`),
      text: form.get('text') ?? '',
      endTarget: responseUrl && chatTargetUrl({ platform: 'slack', url: responseUrl, untilMs: services.now() + responseUrlLifetimeMs }),
      endNote: endNoteOf(services, responseUrl),
      signedAtMs: slackSignedAtMs(request),
    };
  },
  answerBudgetMs: (services) => services.config.SLACK_ACK_BUDGET_MS,
  render: (reply) => slackMessage(reply),
};
