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

  it('never forms a link or a mention in Slack mrkdwn, in the blocks or in the text a notification shows', () => {
    const message = slackMessage({ title: '<https://evil.example|Sign in> <!channel>', facts: [['Failure', '<https://evil.example|here>']], lines: ['`status 0b5c…` asks again.'] });
    expect(JSON.stringify(message.blocks)).not.toMatch(/<https?:|<!/);
    expect(message.text).not.toMatch(/<https?:|<!/);
    expect(message.text).toContain('&lt;!channel&gt;');
    expect(message.text).toContain('`status 0b5c…` asks again.');
  });
});
