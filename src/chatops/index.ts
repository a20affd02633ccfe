/** Chat commands from Slack and Teams (one folder each behind the ChatPlatform interface) and the ends of the operations they start, posted back. */
export { chatEnabled } from './chatSettings';
export { announceHeldStart, chatEndOrigins, chatNotifierOf, chatPlatforms, chatSummaries } from './platforms';
export { slackSignatureOf } from './slack/slackSignature';
export { teamsSignatureOf } from './teams/teamsSignature';
