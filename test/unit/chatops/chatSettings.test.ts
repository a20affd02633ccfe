/** When a chat route is on, who a rule names, and the settings' checks. */
import { accessPolicyOf } from '../../../src/access/accessPolicy';
import { chatEnabled } from '../../../src/chatops/chatSettings';
import { chatSummaries } from '../../../src/chatops/platforms';
import { slackKey } from '../../../src/chatops/slack/slackCommand';
import { ConfigError, parseConfig } from '../../../src/settings/config';

const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };
const tenant = 'AAAAAAAA-0000-4000-8000-000000000001';
const user = 'BBBBBBBB-0000-4000-8000-000000000002';
const slackSecret = '0123456789abcdef0123456789abcdef';
const teamsToken = Buffer.from('thirty-two bytes of a teams toke').toString('base64');

const configWith = (settings: Record<string, string>) => parseConfig({ ...minimal, ...settings });
const policy = (callers: string[]) => JSON.stringify([{ callers, allow: ['read'] }]);

describe('chatEnabled', () => {
  it.each([
    ['a secret and a rule naming a user of the platform', { SLACK_SIGNING_SECRET: slackSecret, ACCESS_POLICY: policy(['slack:T1/U1']) }, true],
    ['a secret but no policy', { SLACK_SIGNING_SECRET: slackSecret }, false],
    ['a secret and only a * rule', { SLACK_SIGNING_SECRET: slackSecret, ACCESS_POLICY: policy(['*']) }, false],
    ['a rule but no secret', { ACCESS_POLICY: policy(['slack:T1/U1']) }, false],
    ["a secret and a rule naming another platform's user", { SLACK_SIGNING_SECRET: slackSecret, ACCESS_POLICY: policy([`teams:${tenant}/${user}`]) }, false],
  ])('Slack with %s: %s', (_name, settings, enabled) => {
    expect(chatEnabled(configWith(settings), slackKey)).toBe(enabled);
  });
});

describe("the app's policy naming a chat user", () => {
  it('names a Teams user ignoring case, a Slack user as written', () => {
    const names = accessPolicyOf(configWith({ TEAMS_WEBHOOK_SECRET: teamsToken, ACCESS_POLICY: policy([`teams:${tenant}/${user}`, 'slack:T1/U1']) }));
    expect(names.names(`teams:${tenant}/${user}`.toLowerCase())).toBe(true);
    expect(names.names('slack:T1/U1')).toBe(true);
    expect(names.names('slack:t1/u1')).toBe(false);
    expect(names.names('slack:T1/U2')).toBe(false);
  });
});

describe('the chat settings', () => {
  it.each([
    ['ACCESS_POLICY', policy(['slack:t1/u1'])],
    // A caller's kind is lower case: a route turned on by `Slack:` would match no Slack user.
    ['ACCESS_POLICY', policy(['Slack:T1/U1'])],
    ['ACCESS_POLICY', policy([`Teams:${tenant}/${user}`])],
    ['ACCESS_POLICY', policy(['slack:T1'])],
    ['ACCESS_POLICY', policy(['teams:not-a-guid/x'])],
    ['SLACK_SIGNING_SECRET', 'short'],
    ['TEAMS_WEBHOOK_SECRET', 'not base64 but long enough!'],
    ['SLACK_RESPONSE_URL_ORIGINS', '["https://hooks.slack.com/commands"]'],
    // The platform's limit less the answer's way to it (500 ms) is the most a budget may be.
    ['SLACK_ACK_BUDGET_MS', '2501'],
    ['TEAMS_ACK_BUDGET_MS', '4501'],
    ['CHATOPS_RESPONSE_URL_MAX_POSTS', '6'],
    ['SLACK_APPROVAL_WEBHOOK_URL', 'hooks.slack.com/services/T1/B1/x'],
    ['SLACK_APPROVAL_WEBHOOK_URL', 'ftp://hooks.slack.com/services/T1/B1/x'],
  ])('%s refuses %j, naming itself', (name, value) => {
    let caught: unknown;
    try {
      configWith({ [name]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.every((problem) => problem.startsWith(`${name} `))).toBe(true);
  });
});

describe("the start's Slack line", () => {
  it('names where approval requests go by origin only: the webhook path holds its token', () => {
    const [, line] = chatSummaries(
      configWith({
        SLACK_SIGNING_SECRET: slackSecret,
        ACCESS_POLICY: policy(['slack:T1/U1']),
        SLACK_APPROVAL_WEBHOOK_URL: 'https://hooks.slack.com/services/T1/B1/approvals-token-0001',
      }),
    ).find(([title]) => title === 'Slack')!;
    expect(line).toContain('approval requests posted to SLACK_APPROVAL_WEBHOOK_URL (https://hooks.slack.com), their clicks to POST chatops/slack/interactive');
    expect(line).not.toContain('approvals-token-0001');
  });
});
