/**
 * The chat routes are off until their platform is configured: without its secret, or without a
 * rule naming one of its users, a correctly signed command answers 404 and reaches nothing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

const teamsToken = randomBytes(32).toString('base64');
const subscription = '11111111-2222-3333-4444-555555555555';
let gateway: InProcessGateway;

beforeAll(async () => {
  gateway = await startInProcessGateway({
    // Teams has its secret but no rule names a Teams user; Slack has a rule but no secret.
    TEAMS_WEBHOOK_SECRET: teamsToken,
    ACCESS_POLICY: JSON.stringify([{ callers: ['slack:T0CHAT/UOPS1', '*'], allow: ['read', 'write'] }]),
  });
});
afterAll(async () => {
  await gateway.stop();
});

it('Slack without SLACK_SIGNING_SECRET: 404, nothing started', async () => {
  const body = new URLSearchParams({
    team_id: 'T0CHAT',
    user_id: 'UOPS1',
    text: `migrate ${subscription}/rg/apim`,
    response_url: 'https://hooks.slack.com/commands/T0CHAT/1/x',
  }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  // Signed with what an unset secret could be mistaken for: nothing.
  const signature = `v0=${createHmac('sha256', '').update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const response = await request(`${gateway.url}/api/chatops/slack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
    body,
  });
  expect(response.statusCode).toBe(404);
  expect(await response.body.json()).toMatchObject({ error: { code: 'NotFound' } });
  expect(gateway.emulator.upstreamRequests()).toEqual([]);
});

it("Slack's button clicks without SLACK_SIGNING_SECRET: 404, nothing decided", async () => {
  const payload = {
    type: 'block_actions',
    user: { id: 'UOPS1' },
    team: { id: 'T0CHAT' },
    actions: [{ action_id: 'approve', value: '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122' }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', '').update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const response = await request(`${gateway.url}/api/chatops/slack/interactive`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
    body,
  });
  expect(response.statusCode).toBe(404);
  expect(await response.body.json()).toMatchObject({ error: { code: 'NotFound' } });
});

it('Teams with its secret but no rule naming a Teams user (a `*` rule is not one): 404, nothing started', async () => {
  const body = JSON.stringify({
    type: 'message',
    timestamp: new Date().toISOString(),
    text: `<at>Gateway</at> migrate ${subscription}/rg/apim`,
    from: { aadObjectId: 'bbbbbbbb-0000-4000-8000-000000000002' },
    channelData: { tenant: { id: 'aaaaaaaa-0000-4000-8000-000000000001' } },
  });
  const authorization = `HMAC ${createHmac('sha256', Buffer.from(teamsToken, 'base64')).update(body).digest('base64')}`;
  const response = await request(`${gateway.url}/api/chatops/teams`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body });
  expect(response.statusCode).toBe(404);
  expect(await response.body.json()).toMatchObject({ error: { code: 'NotFound' } });
  expect(gateway.emulator.upstreamRequests()).toEqual([]);
});
