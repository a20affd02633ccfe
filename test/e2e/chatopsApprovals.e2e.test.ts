/**
 * Approvals in chat, end to end: a Slack stand-in and a Teams stand-in sign requests exactly as
 * the platforms do (../helpers/chatSigning.ts); a local receiver stands in for the approvers'
 * incoming webhook and for the `response_url`s. A migration that a rule holds for approval is
 * acknowledged as waiting, the approval message with its buttons is posted to the webhook, a
 * click on Approve (signed as Slack signs) starts it once, and forged, replayed and unapprovable
 * clicks are refused. The chat commands `approve` and `reject` decide in Slack and Teams. The app
 * is the real one in process, the emulator its upstream, Azurite its storage.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { startChatPostReceiver, type ChatPost, type ChatPostReceiver } from '../helpers/chatPostReceiver';
import { chatIdentities, slackSignedHeaders, teamsActivityOf, teamsAuthorization } from '../helpers/chatSigning';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

jest.setTimeout(120_000);

const { slackSecret, teamsToken, team, tenant } = chatIdentities('T0APPROVE');
const slack = { starter: 'USTARTER', approver: 'UAPPROVER', bystander: 'UBYSTANDER' };
const teams = { starter: 'cccccccc-0000-4000-8000-000000000003', approver: 'dddddddd-0000-4000-8000-000000000004' };
const subscription = '11111111-2222-3333-4444-555555555555';
const scope = `/subscriptions/${subscription}/resourceGroups/rg-approve`;
/** The incoming webhook's token, in its path as Slack's are: never to be seen anywhere else. */
const webhookToken = randomBytes(12).toString('hex');

let receiver: ChatPostReceiver;
let gateway: InProcessGateway;

beforeAll(async () => {
  receiver = await startChatPostReceiver();
  gateway = await startInProcessGateway({
    SLACK_SIGNING_SECRET: slackSecret,
    SLACK_RESPONSE_URL_ORIGINS: JSON.stringify([receiver.origin]),
    SLACK_APPROVAL_WEBHOOK_URL: `${receiver.origin}/services/${team}/B0APPROVALS/${webhookToken}`,
    TEAMS_WEBHOOK_SECRET: teamsToken,
    ACCESS_POLICY: JSON.stringify([
      {
        callers: [`slack:${team}/${slack.starter}`, `teams:${tenant}/${teams.starter}`],
        allow: ['ApiManagementService_MigrateToStv2', 'read'],
        scopes: [scope],
        approval: { count: 1, approvers: [`slack:${team}/${slack.approver}`, `teams:${tenant}/${teams.approver}`] },
      },
      // The approver may terminate its own orchestrations: never, through being an approver, another's.
      { callers: [`slack:${team}/${slack.approver}`], allow: ['orchestrations-terminate'] },
      // Sees every orchestration, approves none.
      { callers: [`slack:${team}/${slack.bystander}`], allow: ['read', 'admin'] },
    ]),
  });
});
afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
});

const migrations = () => gateway.emulator.upstreamRequests({ method: 'POST', pathIncludes: 'migrateToStv2' }).length;
const idIn = (text: string | undefined) => /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/.exec(text ?? '')?.[1];
const webhookPosts = () => receiver.posts.filter((post) => post.path.includes('/B0APPROVALS/'));

async function sendSlack(path: 'chatops/slack' | 'chatops/slack/interactive', body: string, headers = slackSignedHeaders(slackSecret, body)) {
  const response = await request(`${gateway.url}/api/${path}`, { method: 'POST', headers, body });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { text?: string; blocks?: unknown[]; replace_original?: boolean; error?: { code: string; message: string } },
  };
}

const slackCommand = (user: string, text: string) =>
  sendSlack(
    'chatops/slack',
    new URLSearchParams({ team_id: team, user_id: user, command: '/gateway', text, response_url: `${receiver.origin}/commands/${randomUUID()}` }).toString(),
  );

async function teamsCommand(user: string, text: string) {
  const body = teamsActivityOf(text, tenant, user);
  const response = await request(`${gateway.url}/api/chatops/teams`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: teamsAuthorization(teamsToken, body) },
    body,
  });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { text?: string; attachments?: { content: { actions?: { type: string; url: string }[] } }[] },
  };
}

/** A click on one of the approval message's buttons, as Slack's interactivity sends it: its form and the response_url it names. */
function clickOf(user: string, action: 'approve' | 'reject', id: string) {
  const responseUrl = `${receiver.origin}/actions/${team}/${randomUUID()}`;
  const payload = {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), team_id: team },
    api_app_id: 'A0GATEWAY',
    team: { id: team, domain: 'contoso' },
    container: { type: 'message', message_ts: '1700000000.000100', channel_id: 'C0APPROVERS' },
    channel: { id: 'C0APPROVERS', name: 'approvers' },
    response_url: responseUrl,
    actions: [
      { type: 'button', block_id: 'approval', action_id: action, value: id, text: { type: 'plain_text', text: action }, action_ts: '1700000001.000200' },
    ],
  };
  return { body: new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), responseUrl };
}

const postsTo = (url: string): ChatPost[] => receiver.posts.filter((post) => url.endsWith(post.path));

/** Runs the poller until `done` holds, or fails after a generous bound. */
async function pollUntil(done: () => boolean): Promise<void> {
  for (let run = 0; run < 120 && !done(); run += 1) {
    await gateway.host.runTimer('orchestrationPoller');
    if (!done()) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(done()).toBe(true);
}

async function waitFor(done: () => boolean): Promise<void> {
  for (let tries = 0; tries < 200 && !done(); tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(done()).toBe(true);
}

/** A Slack migration held for approval: its id, once its approval message reached the webhook. */
async function waitingMigration(service: string): Promise<string> {
  const before = migrations();
  const ack = await slackCommand(slack.starter, `migrate ${subscription}/rg-approve/${service}`);
  expect(ack.status).toBe(200);
  expect(ack.body.text).toMatch(/^Operation [0-9a-f-]+ waits for approval/);
  const id = idIn(ack.body.text)!;
  await waitFor(() => webhookPosts().some((post) => JSON.stringify(post.body).includes(id)));
  expect(migrations()).toBe(before);
  return id;
}

describe('Slack buttons', () => {
  let id = '';

  it('the starter is told the start waits for approval: who may approve, until when, how to follow it; nothing is sent upstream', async () => {
    const before = migrations();
    const ack = await slackCommand(slack.starter, `migrate ${subscription}/rg-approve/apim-buttons`);
    expect(ack.status).toBe(200);
    id = idIn(ack.body.text)!;
    expect(ack.body.text).toContain(`Operation ${id} waits for approval`);
    expect(ack.body.text).toContain(`Approvers: slack:${team}/${slack.approver}`);
    expect(ack.body.text).toMatch(/Waits until: \d{4}-\d\d-\d\dT/);
    expect(ack.body.text).toContain(`\`status ${id}\``);
    expect(ack.body.text).toContain(`/console#/approvals/${id}`);
    expect(migrations()).toBe(before);
  });

  it('the approval message reaches the webhook once, with an Approve and a Reject button carrying the id, and no secret', async () => {
    await waitFor(() => webhookPosts().some((post) => JSON.stringify(post.body).includes(id)));
    const posts = webhookPosts().filter((post) => JSON.stringify(post.body).includes(id));
    expect(posts).toHaveLength(1);
    const actions = (posts[0]!.body.blocks as { type: string; elements?: { action_id: string; value: string; type: string }[] }[]).find(
      (block) => block.type === 'actions',
    );
    expect(actions?.elements?.map(({ type, action_id, value }) => [type, action_id, value])).toEqual([
      ['button', 'approve', id],
      ['button', 'reject', id],
    ]);
    // The token is in the webhook's path, where it belongs: nowhere in what was posted.
    const text = JSON.stringify([posts[0]!.body, posts[0]!.headers]);
    for (const secret of [slackSecret, teamsToken, webhookToken]) expect(text).not.toContain(secret);
    expect(gateway.logLines.join('\n')).not.toContain(webhookToken);
  });

  it('a forged click and a click from no approver are refused; a replayed click is refused with 401', async () => {
    const forged = clickOf(slack.approver, 'approve', id);
    expect((await sendSlack('chatops/slack/interactive', forged.body, slackSignedHeaders('not-the-signing-secret', forged.body))).status).toBe(401);
    const stale = clickOf(slack.approver, 'approve', id);
    expect(
      (await sendSlack('chatops/slack/interactive', stale.body, slackSignedHeaders(slackSecret, stale.body, Math.floor(Date.now() / 1000) - 3600))).status,
    ).toBe(401);

    const bystander = clickOf(slack.bystander, 'approve', id);
    const headers = slackSignedHeaders(slackSecret, bystander.body);
    const refused = await sendSlack('chatops/slack/interactive', bystander.body, headers);
    expect(refused.status).toBe(200);
    expect(refused.body.replace_original).toBe(false);
    expect(refused.body.text).toContain(`is not among the approvers of orchestration ${id}`);
    await waitFor(() => postsTo(bystander.responseUrl).length === 1);
    expect(postsTo(bystander.responseUrl)[0]!.body).toMatchObject({ response_type: 'ephemeral', replace_original: false });

    const replayed = await sendSlack('chatops/slack/interactive', bystander.body, headers);
    expect(replayed.status).toBe(401);
    expect(replayed.body.error?.code).toBe('Unauthorized');
    expect(migrations()).toBe(0);
  });

  it('a click over CHATOPS_MAX_BODY_BYTES (16 KiB by default), signed or not, is refused with 413 before it is read', async () => {
    const { body } = clickOf(slack.approver, 'approve', id);
    const padded = `${body}&padding=${'x'.repeat(16 * 1024)}`;
    const answer = await sendSlack('chatops/slack/interactive', padded);
    expect([answer.status, answer.body.error?.code]).toEqual([413, 'PayloadTooLarge']);
    expect((await sendSlack('chatops/slack/interactive', padded, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(413);
  });

  it("a payload the route cannot take is refused in words; the starter's own click is refused", async () => {
    const { body } = clickOf(slack.approver, 'approve', id);
    const notAClick = body.replace('block_actions', 'view_submission');
    const refused = await sendSlack('chatops/slack/interactive', notAClick);
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'InvalidRequest']);
    expect(refused.body.error?.message).toContain('block_actions');
    const own = clickOf(slack.starter, 'approve', id);
    const answer = await sendSlack('chatops/slack/interactive', own.body);
    expect(answer.status).toBe(200);
    expect(answer.body.replace_original).toBe(false);
  });

  it("the approver's click approves it: the message shows the decision without buttons, and the migration runs once", async () => {
    const click = clickOf(slack.approver, 'approve', id);
    const answer = await sendSlack('chatops/slack/interactive', click.body);
    expect(answer.status).toBe(200);
    expect(answer.body.replace_original).toBe(true);
    expect(answer.body.text).toContain('was approved');
    expect(JSON.stringify(answer.body.blocks)).toContain(`Approved by slack:${team}/${slack.approver}`);
    expect(JSON.stringify(answer.body.blocks)).toContain('slack-button');
    expect(JSON.stringify(answer.body.blocks)).not.toContain('"actions"');
    await waitFor(() => postsTo(click.responseUrl).length === 1);
    expect(postsTo(click.responseUrl)[0]!.body).toMatchObject({ replace_original: true });

    await pollUntil(() => migrations() === 1);
    // A second click (a new request, signed anew) changes nothing.
    const again = await sendSlack('chatops/slack/interactive', clickOf(slack.approver, 'approve', id).body);
    expect(again.body.replace_original).toBe(false);
    for (let run = 0; run < 3; run += 1) await gateway.host.runTimer('orchestrationPoller');
    expect(migrations()).toBe(1);
  });
});

describe('chat commands', () => {
  it('help lists approve and reject', async () => {
    const help = await slackCommand(slack.approver, 'help');
    expect(help.body.text).toContain('`approve <id>`');
    expect(help.body.text).toContain('`reject <id> [reason]`');
  });

  it('reject in Slack, with a reason: the answer says so; status shows who, when, through what and why', async () => {
    const id = await waitingMigration('apim-rejected');
    const rejected = await slackCommand(slack.approver, `reject ${id} not during the freeze`);
    expect(rejected.body.text).toContain(`Rejected: operation ${id} will not run`);
    const status = await slackCommand(slack.starter, `status ${id}`);
    expect(status.body.text).toContain(`Rejected by slack:${team}/${slack.approver}`);
    expect(status.body.text).toContain('(chat-command): not during the freeze');
    expect(status.body.text).toContain('Approval: rejected');
  });

  it('in Teams the starter gets a card linking to the approval page, and an approver approves with approve <id>', async () => {
    const before = migrations();
    const ack = await teamsCommand(teams.starter, `migrate ${subscription}/rg-approve/apim-teams`);
    expect(ack.status).toBe(200);
    const id = idIn(ack.body.text)!;
    expect(ack.body.text).toContain(`Operation ${id} waits for approval`);
    expect(ack.body.attachments![0]!.content.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open the approval page', url: `${gateway.url}/api/console#/approvals/${id}` },
    ]);
    const status = await teamsCommand(teams.starter, `status ${id}`);
    expect(status.body.attachments![0]!.content.actions?.[0]?.url).toBe(`${gateway.url}/api/console#/approvals/${id}`);

    const own = await teamsCommand(teams.starter, `approve ${id}`);
    expect(own.body.text).not.toContain('Approved:');
    const approved = await teamsCommand(teams.approver, `approve ${id}`);
    expect(approved.body.text).toContain(`Approved: operation ${id} starts`);
    expect(approved.body.text).toContain(`Approved by teams:${tenant}/${teams.approver}`);
    await pollUntil(() => migrations() === before + 1);
  });

  it('an approve by someone who may not approve is answered in words, and changes nothing', async () => {
    const id = await waitingMigration('apim-bystander');
    const refused = await slackCommand(slack.bystander, `approve ${id}`);
    expect(refused.status).toBe(200);
    expect(refused.body.text).toContain('is not among the approvers');
    const status = await slackCommand(slack.starter, `status ${id}`);
    expect(status.body.text).toContain('Approval: waiting: 0 of 1 approval');
  });

  it('an approver that may terminate its own orchestrations cannot terminate a request it may only read as an approver', async () => {
    const id = await waitingMigration('apim-approver-terminate');
    const refused = await slackCommand(slack.approver, `terminate ${id}`);
    expect(refused.body.text).toContain(`No operation ${id} that you may see`);
    const status = await slackCommand(slack.starter, `status ${id}`);
    expect(status.body.text).toContain('Approval: waiting: 0 of 1 approval');
  });
});
