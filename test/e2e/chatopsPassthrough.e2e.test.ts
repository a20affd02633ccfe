/**
 * Chat in an app set up to forward each caller's own token (`UPSTREAM_AUTH=passthrough`): a chat
 * request carries none, so a command that would call the upstream is answered that this app is
 * set up so chat cannot, never asked for an `Authorization` header no chat user can send, and the
 * operator's log names the setting to change. Nothing reaches the upstream.
 */
import { chatIdentities, sendSlackCommand, sendTeamsCommand } from '../helpers/chatSigning';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

const { slackSecret, teamsToken, team, user, tenant, teamsUser } = chatIdentities('T0PASS');

const subscription = '11111111-2222-3333-4444-555555555555';

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = await startInProcessGateway({
    UPSTREAM_AUTH: 'passthrough',
    UPSTREAM_STATIC_TOKEN: '',
    SLACK_SIGNING_SECRET: slackSecret,
    TEAMS_WEBHOOK_SECRET: teamsToken,
    ACCESS_POLICY: JSON.stringify([
      { callers: [`slack:${team}/${user}`, `teams:${tenant}/${teamsUser}`], allow: ['read', 'ApiManagementService_MigrateToStv2'] },
    ]),
  });
}, 60_000);
afterAll(async () => {
  await gateway.stop();
});

describe('a chat command that would call the upstream, in passthrough mode', () => {
  it.each([`migrate ${subscription}/rg-chat/apim-pass`, `usage ${subscription} westus`])(
    '%s: the user is told chat cannot call the upstream here; the log names the setting',
    async (text) => {
      const logsBefore = gateway.logLines.length;
      const answers = [
        await sendSlackCommand(gateway.url, slackSecret, { team, user, text }),
        await sendTeamsCommand(gateway.url, teamsToken, { tenant, user: teamsUser, text }),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.text).toMatch(/set up so that chat commands cannot call the management service/);
        expect(answer.text).not.toMatch(/Authorization|Bearer/i);
      }
      const logged = gateway.logLines.slice(logsBefore).filter((line) => line.includes('UPSTREAM_AUTH'));
      expect(logged).toHaveLength(2);
      expect(logged[0]).toMatch(/UPSTREAM_AUTH=passthrough.*set UPSTREAM_AUTH to managed/);
      expect(gateway.emulator.upstreamRequests()).toEqual([]);
    },
  );

  it('leaves what needs no upstream call as it is', async () => {
    const help = await sendSlackCommand(gateway.url, slackSecret, { team, user, text: 'help' });
    expect(help.text).toContain('Commands this app takes:');
  });
});

describe('secrets', () => {
  it('never reach the log', () => {
    const log = gateway.logLines.join('\n');
    for (const secret of [slackSecret, teamsToken]) expect(log).not.toContain(secret);
  });
});
