/**
 * What `npm run chat` sends: requests the app's own verification accepts, from the users, with the
 * secrets and to the stand-in that the documented local chat start (docs/chatops.md) sets.
 */
import { verifySlackRequest } from '../../../src/chatops/slack/slackSignature';
import { verifyTeamsRequest } from '../../../src/chatops/teams/teamsSignature';
import { documentedSteps } from '../../helpers/documentedCommands';
import { localChat, slackCommandRequest, teamsCommandRequest } from '../../../tools/chatRequests';

it("signs a Slack command as Slack does: the app's check accepts it, with another secret it does not", () => {
  const [team, user] = localChat.slackUser.split('/') as [string, string];
  const { route, headers, body } = slackCommandRequest(localChat.slackSigningSecret, {
    team,
    user,
    text: 'help',
    responseUrl: `${localChat.standIn}/commands/x`,
  });
  expect(route).toBe('chatops/slack');
  expect(Object.fromEntries(new URLSearchParams(body))).toMatchObject({
    team_id: team,
    user_id: user,
    text: 'help',
    response_url: `${localChat.standIn}/commands/x`,
  });
  const signed = { timestamp: headers['x-slack-request-timestamp']!, signature: headers['x-slack-signature']! };
  expect(verifySlackRequest(localChat.slackSigningSecret, signed, Buffer.from(body), Date.now(), 300)).toMatchObject({ ok: true });
  expect(verifySlackRequest('another-secret-0123456789', signed, Buffer.from(body), Date.now(), 300)).toEqual({ ok: false, reason: 'mismatch' });
});

it("signs a Teams activity as Teams does: the app's check accepts it", () => {
  const [tenant, user] = localChat.teamsUser.split('/') as [string, string];
  const { route, headers, body } = teamsCommandRequest(localChat.teamsWebhookSecret, { tenant, user, text: 'help' });
  expect(route).toBe('chatops/teams');
  expect(JSON.parse(body)).toMatchObject({ from: { aadObjectId: user }, channelData: { tenant: { id: tenant } }, text: '<at>Gateway</at>&nbsp;help' });
  expect(verifyTeamsRequest(localChat.teamsWebhookSecret, headers.authorization!, Buffer.from(body))).toMatchObject({ ok: true });
});

it('signs with what the local chat start of docs/chatops.md sets, as its users, and listens where it posts the ends', () => {
  const start = documentedSteps().find((step) => step.kind === 'start' && step.block.where.startsWith('docs/chatops.md'));
  expect(start).toBeDefined();
  const command = (start as { command: string }).command;
  expect(command).toContain(`SLACK_SIGNING_SECRET=${localChat.slackSigningSecret} `);
  expect(command).toContain(`TEAMS_WEBHOOK_SECRET=${localChat.teamsWebhookSecret} `);
  expect(command).toContain(`SLACK_RESPONSE_URL_ORIGINS='["${localChat.standIn}"]'`);
  expect(command).toContain(`TEAMS_WORKFLOW_URL=${localChat.standIn}/`);
  expect(command).toContain(`"slack:${localChat.slackUser}"`);
  expect(command).toContain(`"teams:${localChat.teamsUser}"`);
});
