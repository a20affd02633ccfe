/**
 * Chat replay protection across instances: the app's instances are separate processes sharing
 * one storage account (Azurite), as Azure Functions runs them when it scales out. A signed
 * request one instance took is refused by every other within the timestamp tolerance: each
 * signature is recorded once, app-wide, in storage (src/storage/onceMarkers.ts).
 */
import { randomBytes } from 'node:crypto';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { chatIdentities, sendChat, slackSignedHeaders, teamsActivityOf, teamsAuthorization } from '../helpers/chatSigning';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { slackFormOf } from '../../tools/chatRequests';

const { slackSecret, teamsToken, team, user, tenant, teamsUser } = chatIdentities('T0PAIR');

jest.setTimeout(60_000);

let gateway: GatewayFixture;
let second: AppProcess;

beforeAll(async () => {
  gateway = await startGateway({
    SLACK_SIGNING_SECRET: slackSecret,
    TEAMS_WEBHOOK_SECRET: teamsToken,
    ACCESS_POLICY: JSON.stringify([{ callers: [`slack:${team}/${user}`, `teams:${tenant}/${teamsUser}`], allow: ['read'] }]),
  });
  second = await startApp(gateway.env);
  gateway.others.push(second);
}, 60_000);
afterAll(async () => {
  await second?.stop();
  await gateway?.stop();
});

/**
 * A help command whose body is its own (Slack sends each command with a response_url of its own):
 * a signature is the body's and the second's, so two of the tests' requests made in the same
 * second must differ in body to be different requests.
 */
const slackHelp = () => slackFormOf({ team, user, text: 'help', responseUrl: `https://hooks.slack.com/commands/${team}/${randomBytes(8).toString('hex')}` });

describe('two app instances sharing one storage account', () => {
  it('refuse a Slack request on the second instance once the first took it (a replay within the tolerance)', async () => {
    const body = slackHelp();
    const headers = slackSignedHeaders(slackSecret, body);
    const first = await sendChat(gateway.app.url, 'slack', body, headers);
    expect(first.status).toBe(200);
    expect(first.text).toContain('Commands this app takes');
    const replayed = await sendChat(second.url, 'slack', body, headers);
    expect(replayed.status).toBe(401);
    // And on the first instance again, as before.
    expect((await sendChat(gateway.app.url, 'slack', body, headers)).status).toBe(401);
    // A new request (another body, so another signature) from the same user is taken by either.
    const again = slackHelp();
    expect((await sendChat(second.url, 'slack', again, slackSignedHeaders(slackSecret, again))).status).toBe(200);
  });

  it('refuse a Teams activity on the second instance once the first took it', async () => {
    const body = teamsActivityOf('help', tenant, teamsUser);
    const headers = { 'content-type': 'application/json', authorization: teamsAuthorization(teamsToken, body) };
    expect((await sendChat(second.url, 'teams', body, headers)).status).toBe(200);
    expect((await sendChat(gateway.app.url, 'teams', body, headers)).status).toBe(401);
  });

  it('take the same request sent to both instances at once exactly once', async () => {
    const body = slackHelp();
    const headers = slackSignedHeaders(slackSecret, body);
    const answers = await Promise.all([sendChat(gateway.app.url, 'slack', body, headers), sendChat(second.url, 'slack', body, headers)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
  });
});
