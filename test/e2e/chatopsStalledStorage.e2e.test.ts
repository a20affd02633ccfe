/**
 * Chat commands while the app's storage hangs: Slack shows the user its own timeout when an
 * answer takes longer than 3 s, so a command whose storage read stalls is answered, within the
 * platform's budget, with a message saying it is still running (and its correlation id), not
 * after the storage timeout. The app is the real one in process, its storage behind a proxy
 * that stalls as a hung account does.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { startInProcessGateway, storageBehind, type InProcessGateway } from '../helpers/inProcessGateway';
import { startStallingProxy, type StallingProxy } from '../helpers/stallingProxy';

jest.setTimeout(60_000);

const slackSecret = randomBytes(16).toString('hex');
const team = 'T0STALL';
const user = 'UOPS1';

let gateway: InProcessGateway;
let storage: StallingProxy;

beforeAll(async () => {
  gateway = await startInProcessGateway(
    {
      SLACK_SIGNING_SECRET: slackSecret,
      SLACK_ACK_BUDGET_MS: '1000',
      // Far longer than Slack waits: the answer must not wait for storage to give up.
      STORAGE_TIMEOUT_MS: '30000',
      ACCESS_POLICY: JSON.stringify([{ callers: [`slack:${team}/${user}`], allow: ['read'] }]),
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

async function sendSlack(text: string) {
  const body = new URLSearchParams({ team_id: team, user_id: user, text, command: '/gateway' }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', slackSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const response = await request(`${gateway.url}/api/chatops/slack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
    body,
  });
  return { status: response.statusCode, body: (await response.body.json()) as { text?: string }, correlationId: response.headers['x-correlation-id'] };
}

describe('a chat command while storage hangs', () => {
  it('is answered with a message saying it is still running, with its correlation id, not after the storage timeout', async () => {
    storage.stall();
    // An id no cache holds: its status is a storage read, which hangs.
    const answer = await sendSlack(`status ${randomUUID()}`);
    expect(answer.status).toBe(200);
    expect(answer.body.text).toContain('The command is still running');
    expect(answer.body.text).toContain(`Correlation id: ${String(answer.correlationId)}`);
    // Once storage answers again, so does the command (the stalled read settles meanwhile).
    storage.resume();
    const id = randomUUID();
    expect((await sendSlack(`status ${id}`)).body.text).toContain(`No operation ${id}`);
  });
});
