/**
 * Microsoft Teams: an outgoing webhook's mentions to `POST chatops/teams` (teamsActivity.ts),
 * signed with TEAMS_WEBHOOK_SECRET; the end of a command goes to the Workflows webhook
 * TEAMS_WORKFLOW_URL names.
 */
import { appRoutes } from '../../routes';
import { chatRoute } from '../chatEndpoint';
import type { ChatPlatform } from '../chatPlatform';
import { teamsActivities, teamsKey } from './teamsActivity';
import { teamsMessage } from './teamsMessages';

export const teams: ChatPlatform = {
  ...teamsKey,
  title: 'Teams',
  routes: [{ route: appRoutes.chatopsTeams, handler: chatRoute(teamsActivities) }],
  commands: teamsActivities,
  endSender: () => ({ send: (target, reply, post) => post(target.url, teamsMessage(reply)) }),
  endOrigins: (config) => (config.TEAMS_WORKFLOW_URL ? [new URL(config.TEAMS_WORKFLOW_URL).origin] : []),
  endsSummary: (config) =>
    config.TEAMS_WORKFLOW_URL
      ? `ends posted to TEAMS_WORKFLOW_URL (${new URL(config.TEAMS_WORKFLOW_URL).origin})`
      : 'no TEAMS_WORKFLOW_URL: `status <id>` reads the ends',
};
