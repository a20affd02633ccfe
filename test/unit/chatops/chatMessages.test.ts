/** What the app's chat messages make of text from elsewhere (an upstream's failure message, a usage name). */
import { endReply } from '../../../src/chatops/chatNotifier';
import { slackMessage } from '../../../src/chatops/slack/slackMessages';
import { teamsMessage } from '../../../src/chatops/teams/teamsMessages';
import { stateReply } from '../../../src/chatops/orchestrationCommands';
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';
import { endEventData } from '../../../src/orchestration/statusDocument';

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
    const message = slackMessage({
      title: '<https://evil.example|Sign in> <!channel>',
      facts: [['Failure', '<https://evil.example|here>']],
      lines: ['`status 0b5c…` asks again.'],
    });
    expect(JSON.stringify(message.blocks)).not.toMatch(/<https?:|<!/);
    expect(message.text).not.toMatch(/<https?:|<!/);
    expect(message.text).toContain('&lt;!channel&gt;');
    expect(message.text).toContain('`status 0b5c…` asks again.');
  });
});

describe("an operation's facts", () => {
  const ended = {
    id: '0b5c0000-0000-4000-8000-000000000002',
    name: 'ApiManagementService_MigrateToStv2',
    runtimeStatus: 'Failed',
    createdTime: '2026-11-26T04:00:00Z',
    lastUpdatedTime: '2026-11-26T05:00:00Z',
    endedTime: '2026-11-26T05:00:00Z',
    output: { status: 409 },
    failure: { code: 'UpstreamFailed', message: 'The migration failed.' },
  } as unknown as OrchestrationState;

  it('are the same in the answer to `status` and in the end notice, which leaves out when it started', () => {
    const status = stateReply(ended).facts!;
    expect(status).toEqual([
      ['Operation', 'ApiManagementService_MigrateToStv2'],
      ['Status', 'Failed'],
      ['Started', '2026-11-26T04:00:00Z'],
      ['Ended', '2026-11-26T05:00:00Z'],
      ['Upstream answer', 'HTTP 409'],
      ['Failure', 'UpstreamFailed: The migration failed.'],
    ]);
    expect(endReply(endEventData(ended, 'https://app.example/api')).facts).toEqual(status.filter(([label]) => label !== 'Started'));
  });

  it('leave out what an operation still running has not got', () => {
    const running = { ...ended, runtimeStatus: 'Running', endedTime: undefined, output: undefined, failure: undefined } as OrchestrationState;
    expect(stateReply(running).facts!.map(([label]) => label)).toEqual(['Operation', 'Status', 'Started']);
  });
});
