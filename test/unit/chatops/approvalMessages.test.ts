/** What chat shows of a start waiting for approval: the Slack message's buttons, the decisions, the console's page. */
import { approvalMessage } from '../../../src/chatops/slack/approvalAnnouncements';
import { decisionReply, waitingReply, withApproval } from '../../../src/chatops/approvalReplies';
import { slackMessage } from '../../../src/chatops/slack/slackMessages';
import { teamsMessage } from '../../../src/chatops/teams/teamsMessages';
import type { ApprovalStatus } from '../../../src/orchestration/approvalStatus';
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';

const id = '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122';
const appBase = 'https://gw.contoso.com/api';

function waitingState(approval: Partial<ApprovalStatus> = {}): OrchestrationState {
  return {
    id,
    name: 'ApiManagementService_MigrateToStv2',
    runtimeStatus: 'Pending',
    input: { method: 'POST', path: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ApiManagement/service/apim/migrateToStv2', query: [] },
    requestKey: 'k',
    startedBy: 'slack:T1/USTARTER',
    customStatus: {
      upstreamState: 'Pending',
      approval: {
        state: 'waiting',
        required: 2,
        approvers: ['slack:T1/UAPPROVER', 'role:Gateway.Approver'],
        expiresAt: '2026-11-28T12:00:00.000Z',
        decisions: [],
        ...approval,
      },
    },
    createdTime: '2026-11-28T10:00:00.000Z',
    lastUpdatedTime: '2026-11-28T10:00:00.000Z',
  };
}

const approvedBy = (by: string) => ({ by, approved: true, at: '2026-11-28T10:05:00.000Z', route: 'slack-button' as const });

describe('the Slack approval message', () => {
  it('carries an Approve and a Reject button whose value is the request id, while it waits', () => {
    const message = approvalMessage(waitingState(), appBase);
    expect(message).not.toHaveProperty('response_type');
    const actions = message.blocks.filter((block) => (block as { type: string }).type === 'actions');
    expect(actions).toEqual([
      {
        type: 'actions',
        block_id: 'approval',
        elements: [
          { type: 'button', action_id: 'approve', text: { type: 'plain_text', text: 'Approve' }, style: 'primary', value: id },
          { type: 'button', action_id: 'reject', text: { type: 'plain_text', text: 'Reject' }, style: 'danger', value: id },
        ],
      },
    ]);
    expect(message.text).toContain('slack:T1/USTARTER asks to run ApiManagementService_MigrateToStv2');
    expect(JSON.stringify(message.blocks)).toContain(`<${appBase}/console#/approvals/${id}|Open the approval page>`);
  });

  it('shows the decisions and no buttons once decided', () => {
    const decided = waitingState({
      state: 'rejected',
      decisions: [{ by: 'slack:T1/UAPPROVER', approved: false, reason: 'freeze <!channel>', at: '2026-11-28T10:06:00.000Z', route: 'slack-button' }],
    });
    const message = approvalMessage(decided, appBase);
    expect(JSON.stringify(message.blocks)).not.toContain('"actions"');
    expect(message.text).toContain('was rejected');
    expect(message.text).toContain('Rejected by slack:T1/UAPPROVER: 2026-11-28T10:06:00.000Z (slack-button): freeze &lt;!channel&gt;');
  });
});

describe('the chat replies', () => {
  it('say a start waits for approval: who may approve, until when, how, and link the console page (a button in Teams)', () => {
    const state = waitingState();
    const reply = waitingReply(state, state.customStatus!.approval!, appBase);
    expect(reply.title).toBe(`Operation ${id} waits for approval`);
    expect(reply.facts).toEqual(
      expect.arrayContaining([
        ['Approval', 'waiting: 0 of 2 approvals'],
        ['Approvers', 'slack:T1/UAPPROVER, role:Gateway.Approver'],
        ['Waits until', '2026-11-28T12:00:00.000Z'],
      ]),
    );
    expect(reply.lines!.join('\n')).toContain(`\`status ${id}\``);
    const card = teamsMessage(reply).attachments[0]!.content as { actions?: unknown[] };
    expect(card.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Open the approval page', url: `${appBase}/console#/approvals/${id}` }]);
  });

  it('say what a decision did and what is still needed', () => {
    expect(decisionReply(waitingState({ decisions: [approvedBy('slack:T1/UAPPROVER')] }), appBase)).toMatchObject({
      title: `Your approval of operation ${id} is recorded`,
      lines: ['It still needs 1 more approval from another approver by 2026-11-28T12:00:00.000Z.'],
    });
    expect(decisionReply(waitingState({ state: 'approved', decisions: [approvedBy('a'), approvedBy('b')] }), appBase).title).toBe(
      `Approved: operation ${id} starts`,
    );
    expect(decisionReply(waitingState({ state: 'rejected' }), appBase).title).toBe(`Rejected: operation ${id} will not run`);
  });

  it('add the approval to a status reply only when the operation needed one', () => {
    const plain = { title: 'Operation x', facts: [['Status', 'Running']] as [string, string][] };
    const { customStatus: _none, ...unapproved } = waitingState();
    expect(withApproval(plain, unapproved as OrchestrationState, appBase)).toBe(plain);
    expect(slackMessage(withApproval(plain, waitingState({ decisions: [approvedBy('slack:T1/UAPPROVER')] }), appBase)).text).toContain(
      'Approved by slack:T1/UAPPROVER: 2026-11-28T10:05:00.000Z (slack-button)',
    );
  });
});
