/**
 * The chat-ops routes: Slack slash commands and button clicks, and Teams outgoing webhooks.
 * Registration only: the work is in src/chatops.
 */
import { app } from '@azure/functions';
import { appRoutes, registrationOf } from '../src/routes/appRoutes';
import { chatRoute } from '../src/chatops/chatEndpoint';
import { slackClickHandler } from '../src/chatops/slackClicks';
import { slackCommands } from '../src/chatops/slackCommand';
import { teamsActivities } from '../src/chatops/teamsActivity';

app.http(appRoutes.chatopsSlack.name, { ...registrationOf(appRoutes.chatopsSlack), handler: chatRoute(slackCommands) });
app.http(appRoutes.chatopsTeams.name, { ...registrationOf(appRoutes.chatopsTeams), handler: chatRoute(teamsActivities) });
app.http(appRoutes.chatopsSlackInteractive.name, { ...registrationOf(appRoutes.chatopsSlackInteractive), handler: slackClickHandler });
