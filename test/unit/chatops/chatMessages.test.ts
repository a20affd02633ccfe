/** What the app's chat messages make of text from elsewhere (an upstream's failure message, a usage name). */
import { endReply } from '../../../src/chatops/chatNotifier';
import { slackMessage, teamsMessage } from '../../../src/chatops/chatMessages';

const phishing = '[Sign in again to finish](https://evil.example/login)';

/** An end whose failure message and name an upstream wrote. */
const hostileEnd = endReply({
  id: '0b5c0000-0000-4000-8000-000000000001',
  name: `ApiManagementService_MigrateToStv2 ${phishing}`,
  runtimeStatus: 'Failed',
  failure: { code: 'UpstreamFailed', message: `The migration failed. ${phishing}` },
  endedTime: '2026-11-26T05:00:00Z',
} as unknown as Parameters<typeof endReply>[0]);

describe('text from elsewhere in a chat message', () => {
  it('never forms a Markdown link in a Teams card or its text', () => {
    const message = JSON.stringify(teamsMessage(hostileEnd));
    expect(message).toContain('Sign in again to finish');
    expect(message).not.toMatch(/\]\(/);
  });

  it('never forms a link in Slack mrkdwn', () => {
    const blocks = JSON.stringify(slackMessage({ title: '<https://evil.example|Sign in> <!channel>', facts: [['Failure', '<https://evil.example|here>']] }).blocks);
    expect(blocks).not.toMatch(/<https?:|<!/);
  });
});
