/** A Slack click's form as the interactive route reads it: what it takes, and each refusal in words. */
import { GatewayError } from '../../../src/errors';
import { readSlackClick } from '../../../src/chatops/slack/slackClickPayload';

const id = '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122';

/** A block_actions payload as Slack sends one (trimmed: Slack adds the whole message, the channel, …). */
function payload(changes: Record<string, unknown> = {}) {
  return {
    type: 'block_actions',
    user: { id: 'U04XYZ', username: 'ops', team_id: 'T0123ABC' },
    api_app_id: 'A0APP',
    team: { id: 'T0123ABC', domain: 'contoso' },
    container: { type: 'message', message_ts: '1700000000.000100', channel_id: 'C0APPROVERS' },
    channel: { id: 'C0APPROVERS', name: 'approvers' },
    message: { type: 'message', text: 'waits for approval', blocks: [] },
    response_url: 'https://hooks.slack.com/actions/T0123ABC/1/abc',
    actions: [
      {
        type: 'button',
        block_id: 'approval',
        action_id: 'approve',
        value: id.toUpperCase(),
        text: { type: 'plain_text', text: 'Approve' },
        action_ts: '1700000001.000200',
      },
    ],
    ...changes,
  };
}

const formOf = (value: unknown) => new URLSearchParams({ payload: typeof value === 'string' ? value : JSON.stringify(value) });

function refusalOf(form: URLSearchParams): GatewayError {
  try {
    readSlackClick(form);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('The form was taken');
}

describe('readSlackClick', () => {
  it('reads who clicked which button on which request', () => {
    expect(readSlackClick(formOf(payload()))).toEqual({
      team: 'T0123ABC',
      user: 'U04XYZ',
      approved: true,
      id,
      responseUrl: 'https://hooks.slack.com/actions/T0123ABC/1/abc',
    });
    const rejected = payload({ actions: [{ type: 'button', action_id: 'reject', value: id }] });
    expect(readSlackClick(formOf(rejected))).toMatchObject({ approved: false, id });
  });

  it.each([
    ['no payload field', new URLSearchParams({ text: 'approve' }), 'InvalidRequest', /one field, `payload`/],
    ['a payload that is not JSON', formOf('{"type":'), 'InvalidJson', /not JSON/],
    ['another kind of interaction', formOf(payload({ type: 'view_submission' })), 'InvalidRequest', /block_actions/],
    ['no team', formOf(payload({ team: null })), 'InvalidRequest', /team/],
    ["a user id that is not Slack's", formOf(payload({ user: { id: 'u/../x' } })), 'InvalidRequest', /user\.id: must be a Slack user id/],
    ['another button', formOf(payload({ actions: [{ action_id: 'delete', value: id }] })), 'InvalidRequest', /Approve and Reject buttons/],
    ['a value that is no id', formOf(payload({ actions: [{ action_id: 'approve', value: 'https://evil.example/x' }] })), 'InvalidRequest', /GUID/],
    ['no action', formOf(payload({ actions: [] })), 'InvalidRequest', /no action/],
    [
      'two actions',
      formOf(
        payload({
          actions: [
            { action_id: 'approve', value: id },
            { action_id: 'reject', value: id },
          ],
        }),
      ),
      'InvalidRequest',
      /one action/,
    ],
    ['a JSON array', formOf([payload()]), 'InvalidRequest', /cannot be taken/],
  ])('refuses %s with a 400 saying what is wrong', (_, form, code, message) => {
    const refusal = refusalOf(form);
    expect([refusal.code, refusal.status]).toEqual([code, 400]);
    expect(refusal.message).toMatch(message);
  });
});
