/**
 * `POST chatops/teams`: a Teams outgoing webhook's message activity (JSON: `text` with the
 * `<at>` mention, `from.aadObjectId`, the tenant in `channelData.tenant.id`), signed with the
 * webhook's security token. The answer is a message activity with an Adaptive Card, which
 * Teams shows in the thread (HTTP 200 within 5 s); an operation's end is posted to the
 * Workflows webhook TEAMS_WORKFLOW_URL names.
 */
import { chatCallerOf } from '../../callers';
import { GatewayError } from '../../errors';
import { chatTargetUrl, type ChatPlatformHandler, type ChatPlatformKey } from '../chatPlatform';
import { teamsMessage } from './teamsMessages';
import { verifyTeamsRequest } from './teamsSignature';

/** Teams among the platforms (teamsPlatform.ts is the whole of it). */
export const teamsKey: ChatPlatformKey = { name: 'teams', secretSetting: 'TEAMS_WEBHOOK_SECRET' };

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Activity {
  type?: unknown;
  text?: unknown;
  timestamp?: unknown;
  from?: { aadObjectId?: unknown };
  channelData?: { tenant?: { id?: unknown } };
  conversation?: { tenantId?: unknown };
}

/** The command in a message's HTML: the bot's `<at>` mention and tags dropped, entities read. */
function commandTextOf(html: string): string {
  return html
    .replace(/<at>[^<]*<\/at>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

function activityOf(body: Buffer): Activity {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Activity;
  } catch {
    // Answered below.
  }
  throw new GatewayError('InvalidJson', 'An outgoing webhook sends a JSON activity.');
}

export const teamsActivities: ChatPlatformHandler = {
  platform: teamsKey,
  verify: (services, request, body) => verifyTeamsRequest(services.config.TEAMS_WEBHOOK_SECRET!, request.headers.get('authorization'), body),
  read(services, _request, body) {
    const activity = activityOf(body);
    // Teams signs no time of its own: the signed activity's timestamp is held to the tolerance.
    const sentMs = typeof activity.timestamp === 'string' ? Date.parse(activity.timestamp) : Number.NaN;
    if (!Number.isFinite(sentMs) || Math.abs(services.now() - sentMs) > services.config.CHATOPS_TIMESTAMP_TOLERANCE_SECONDS * 1000) {
      throw new GatewayError('Unauthorized', 'The activity is stamped at a time too far from now; it is refused.');
    }
    const tenant = activity.channelData?.tenant?.id ?? activity.conversation?.tenantId;
    const user = activity.from?.aadObjectId;
    if (typeof tenant !== 'string' || typeof user !== 'string' || !guid.test(tenant) || !guid.test(user)) {
      throw new GatewayError('InvalidRequest', 'The activity names no tenant id and AAD object id of its sender.');
    }
    const workflowUrl = services.config.TEAMS_WORKFLOW_URL;
    return {
      // Teams' ids are GUIDs, which ACCESS_POLICY names in any case: the name is lower case.
      caller: chatCallerOf(teamsKey.name, `${tenant}/${user}`.toLowerCase()),
      text: typeof activity.text === 'string' ? commandTextOf(activity.text.slice(0, 4 * services.config.CHATOPS_MAX_COMMAND_CHARS)) : '',
      endTarget: workflowUrl && chatTargetUrl({ platform: 'teams', url: workflowUrl }),
      endNote: workflowUrl ? 'Its end will be posted to the channel.' : 'No channel webhook is set: `status <id>` reads the end.',
      signedAtMs: sentMs,
    };
  },
  answerBudgetMs: (services) => services.config.TEAMS_ACK_BUDGET_MS,
  render: (reply) => teamsMessage(reply),
};
