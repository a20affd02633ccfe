/**
 * Chat commands while the app's storage hangs: Slack shows the user its own timeout when an
 * answer takes longer than 3 s (Teams: 5 s), so a command whose storage read stalls is answered,
 * within the platform's limit, with a message saying it is still running (and its correlation
 * id), not after the storage timeout. With the highest ack budgets the settings accept, the
 * answer still leaves the time it needs to reach the platform. A command whose replay record
 * (docs/chatops.md) cannot be written in that time is refused unrun, in time too. The app is the
 * real one in process, its storage behind a proxy that stalls as a hung account does.
 */
import { randomUUID } from 'node:crypto';
import { parseConfig } from '../../src/settings/config';
import { chatIdentities, sendSlackCommand, sendTeamsCommand } from '../helpers/chatSigning';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';
import { startStallingProxy, type StallingProxy } from '../helpers/stallingProxy';

const { slackSecret, teamsToken, team, user, tenant, teamsUser } = chatIdentities('T0STALL');

jest.setTimeout(60_000);

/** The platforms' limits, and what an answer needs of them to get from the app to the platform. */
const platformLimitMs = { slack: 3000, teams: 5000 };
const transitMs = 400;

/** The highest value the settings accept for `name` (a search over what parseConfig takes). */
function highestAccepted(name: string): number {
  const accepts = (value: number) => {
    try {
      parseConfig({ MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com', [name]: String(value) });
      return true;
    } catch {
      return false;
    }
  };
  let [low, high] = [1, 60_000];
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (accepts(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

const budgets = { slack: highestAccepted('SLACK_ACK_BUDGET_MS'), teams: highestAccepted('TEAMS_ACK_BUDGET_MS') };
let gateway: InProcessGateway;
let storage: StallingProxy;

beforeAll(async () => {
  gateway = await startInProcessGateway(
    {
      SLACK_SIGNING_SECRET: slackSecret,
      TEAMS_WEBHOOK_SECRET: teamsToken,
      SLACK_ACK_BUDGET_MS: String(budgets.slack),
      TEAMS_ACK_BUDGET_MS: String(budgets.teams),
      // Far longer than the platforms wait: the answer must not wait for storage to give up.
      STORAGE_TIMEOUT_MS: '30000',
      ACCESS_POLICY: JSON.stringify([{ callers: [`slack:${team}/${user}`, `teams:${tenant}/${teamsUser}`], allow: ['read'] }]),
    },
    {},
    {
      storageConnection: storageBehind(startStallingProxy, (started) => (storage = started)),
    },
  );
}, 60_000);
afterAll(async () => {
  await gateway.stop();
  await storage.close();
});

const send = {
  slack: (text: string) => sendSlackCommand(gateway.url, slackSecret, { team, user, text }),
  teams: (text: string) => sendTeamsCommand(gateway.url, teamsToken, { tenant, user: teamsUser, text }),
};

describe.each(['slack', 'teams'] as const)('a %s command while storage hangs, at the highest ack budget the settings accept', (platform) => {
  it('is refused unrun, in time to reach the platform, when the replay record cannot be written (fails closed)', async () => {
    storage.stall();
    const answer = await send[platform](`status ${randomUUID()}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('The command was not run: the app could not check that this request was not sent before');
    expect(answer.text).toContain(`Correlation id: ${String(answer.correlationId)}`);
    console.log(`chat-ops: ${platform} at SLACK/TEAMS_ACK_BUDGET_MS=${budgets[platform]} with storage stalled refused in ${answer.elapsedMs} ms`);
    expect(answer.elapsedMs).toBeLessThanOrEqual(platformLimitMs[platform] - transitMs);
    storage.resume();
  });

  it('is answered with a message saying it is still running, with its correlation id, in time to reach the platform', async () => {
    // The command once with storage well (its code loaded), then: the replay record is written,
    // the command's own read (the orchestration's document) hangs.
    const warm = randomUUID();
    expect((await send[platform](`status ${warm}`)).text).toContain(`No operation ${warm}`);
    storage.stallMatching(/^(GET|HEAD) \S*\/instances\//);
    const answer = await send[platform](`status ${randomUUID()}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('The command is still running');
    expect(answer.text).toContain(`Correlation id: ${String(answer.correlationId)}`);
    console.log(`chat-ops: ${platform} at SLACK/TEAMS_ACK_BUDGET_MS=${budgets[platform]} with storage stalled answered in ${answer.elapsedMs} ms`);
    expect(answer.elapsedMs).toBeLessThanOrEqual(platformLimitMs[platform] - transitMs);
    // Once storage answers again, so does the command (the stalled read settles meanwhile).
    storage.resume();
    const id = randomUUID();
    expect((await send[platform](`status ${id}`)).text).toContain(`No operation ${id}`);
  });
});
