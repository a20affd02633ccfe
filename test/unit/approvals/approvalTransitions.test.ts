/** How a start that waits for approval changes: decisions, its end, its send, the stale-start rule, and its approval kept to the end. */
import { distinctApprovals, identitiesOf, sameCaller } from '../../../src/approvals/approvalIdentities';
import {
  approvalStepOf,
  awaitsSend,
  notApprovedEnding,
  waitingApproval,
  waitingRetryAfterOf,
  waitingStatus,
  withDecision,
} from '../../../src/approvals/approvalTransitions';
import { withSendClaim } from '../../../src/orchestration/heldStarts';
import { pendingSinceOf } from '../../../src/orchestration/orchestrationRecords';
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';
import { afterRead, ended, running } from '../../../src/orchestration/transitions';

const now = Date.parse('2026-06-01T00:00:00Z');
const minute = 60_000;
const waiting: OrchestrationState = {
  id: 'o1',
  name: 'ApiManagementService_MigrateToStv2',
  runtimeStatus: 'Pending',
  input: { method: 'POST', path: 'p', query: [] },
  requestKey: 'k',
  startedBy: 'key:starter00001',
  createdTime: new Date(now).toISOString(),
  lastUpdatedTime: new Date(now).toISOString(),
  customStatus: waitingStatus(waitingApproval(2, ['role:Approver'], now + 60 * minute, { primary: 'key:starter00001', selectors: ['key:starter00001'] })),
  heldStart: { url: 'https://m/p', headers: {} },
};
const decision = (by: string, approved: boolean, reason?: string) => ({
  by,
  approved,
  route: 'api' as const,
  at: new Date(now).toISOString(),
  ...(reason ? { reason } : {}),
});
const decisionAs = (identities: string[], at = now) => ({
  by: identities[0]!,
  identities,
  approved: true,
  route: 'api' as const,
  at: new Date(at).toISOString(),
});

describe('who a caller is, for an approval', () => {
  it('keeps every key and principal of the starter, never its roles', () => {
    const approval = waitingApproval(1, ['role:Approver'], now + minute, {
      primary: 'principal:AAAA-1111',
      selectors: ['principal:AAAA-1111', 'key:0123456789AB', 'role:Approver'],
    });
    expect(approval.starter).toEqual(['principal:aaaa-1111', 'key:0123456789ab']);
    expect(identitiesOf({ primary: 'anonymous', selectors: [] })).toEqual(['anonymous']);
  });

  it('takes a Teams user and a principal with the same object id as one caller, whatever the case, and a Slack id as itself', () => {
    expect(sameCaller(['principal:aaaa-1111', 'key:0123456789ab'], ['teams:tttt-0000/AAAA-1111'])).toBe(true);
    expect(sameCaller(['principal:aaaa-1111', 'key:0123456789ab'], ['key:0123456789AB'])).toBe(true);
    expect(sameCaller(['teams:tttt-0000/aaaa-1111'], ['teams:other-tenant/aaaa-1111'])).toBe(true);
    expect(sameCaller(['principal:aaaa-1111'], ['principal:bbbb-2222', 'slack:T1/aaaa-1111'])).toBe(false);
    expect(sameCaller(['slack:T1/U2'], ['slack:T1/u2'])).toBe(false);
  });

  it('counts approvals by distinct callers: decisions that share a name, directly or through another, count once', () => {
    expect(distinctApprovals([decisionAs(['principal:p1', 'key:k1']), decisionAs(['key:K1']), decisionAs(['teams:t/P1'])])).toBe(1);
    expect(distinctApprovals([decisionAs(['key:k1']), decisionAs(['key:k2']), decisionAs(['key:k1', 'key:k2'])])).toBe(1);
    expect(distinctApprovals([decisionAs(['key:k1']), decisionAs(['principal:p2']), { ...decisionAs(['key:k3']), approved: false }])).toBe(2);
    // Decisions recorded before names were kept count by their one name.
    expect(distinctApprovals([decision('key:a00000000001', true), decision('key:a00000000002', true)])).toBe(2);
  });
});

it('stays waiting when one caller approves under two of its names', () => {
  const once = withDecision(waiting, decisionAs(['principal:p1', 'key:a00000000001']), now);
  const again = withDecision(once, decisionAs(['teams:tttt-0000/P1']), now);
  expect(again.customStatus?.approval?.state).toBe('waiting');
  expect(awaitsSend(withDecision(once, decisionAs(['key:a00000000002']), now))).toBe(true);
});

it('is never sent when its last approval came at or after its expiry: it ends expired', () => {
  const expiry = now + 60 * minute;
  const late = withDecision(withDecision(waiting, decisionAs(['key:a00000000001']), now), decisionAs(['key:a00000000002'], expiry), expiry);
  expect(awaitsSend(late)).toBe(true);
  expect(approvalStepOf(late, expiry)).toMatchObject({
    kind: 'end',
    ending: {
      runtimeStatus: 'Failed',
      failure: { code: 'NotApproved', message: expect.stringMatching(/not before the request expired at 2026-06-01T01:00:00.000Z.*Start it again/) },
      customStatus: { approval: { state: 'expired' } },
    },
  });
  const inTime = withDecision(withDecision(waiting, decisionAs(['key:a00000000001']), now), decisionAs(['key:a00000000002'], expiry - 1), expiry - 1);
  expect(approvalStepOf(inTime, expiry + minute)).toEqual({ kind: 'send' });
});

it('waits until the approvals needed come from distinct callers, then awaits its send', () => {
  const once = withDecision(waiting, decision('key:a00000000001', true), now + minute);
  expect(once.customStatus?.approval?.state).toBe('waiting');
  expect(once.customStatus?.message).toMatch(/1 of 2/);
  const twice = withDecision(once, decision('key:a00000000001', true), now + minute);
  expect(twice.customStatus?.approval?.state).toBe('waiting');
  const approved = withDecision(once, decision('key:a00000000002', true), now + 2 * minute);
  expect(awaitsSend(approved)).toBe(true);
  // An approved start is given as long again as it was given to wait to be sent.
  expect(approved.heldStart?.sendBy).toBe(now + 2 * minute + 60 * minute);
  expect(approvalStepOf(approved, now + 3 * minute)).toEqual({ kind: 'send' });
  expect(approvalStepOf(approved, now + 63 * minute)).toMatchObject({ kind: 'end', ending: { failure: { code: 'DeadlineExceeded' } } });
  expect(awaitsSend(withSendClaim(approved, now + 3 * minute))).toBe(false);
});

it('ends at the first rejection, naming who and why', () => {
  const rejected = withDecision(waiting, decision('key:a00000000001', false, 'freeze'), now);
  expect(notApprovedEnding(rejected)).toMatchObject({
    runtimeStatus: 'Failed',
    failure: { code: 'NotApproved', message: expect.stringMatching(/key:a00000000001.*freeze/) },
  });
});

it('expires at its expiry, not before', () => {
  expect(approvalStepOf(waiting, now + 59 * minute)).toEqual({ kind: 'wait' });
  expect(approvalStepOf(waiting, now + 60 * minute)).toMatchObject({
    kind: 'end',
    ending: { failure: { code: 'NotApproved' }, customStatus: { approval: { state: 'expired' } } },
  });
});

it('is left alone by the stale-start rule while it waits or awaits its send, and counts from its send claim', () => {
  const approved = withDecision(withDecision(waiting, decision('key:a00000000001', true), now), decision('key:a00000000002', true), now);
  expect(pendingSinceOf(waiting)).toBeUndefined();
  expect(pendingSinceOf(approved)).toBeUndefined();
  expect(pendingSinceOf(withSendClaim(approved, now + 5 * minute))).toBe(now + 5 * minute);
  const { customStatus: _none, heldStart: _held, ...plain } = waiting;
  expect(pendingSinceOf(plain)).toBe(now);
});

it('tells pollers of a waiting start to come back in a while, not every second', () => {
  expect(waitingRetryAfterOf(waiting, now)).toBe(10_000);
  expect(waitingRetryAfterOf(waiting, now + 60 * minute - 3000)).toBe(3000);
});

it('keeps the approval and its decisions once sent, polled and ended', () => {
  const approved = withDecision(withDecision(waiting, decision('key:a00000000001', true), now), decision('key:a00000000002', true), now);
  const policy = { defaultMs: 60_000, floorMs: 1000, ceilingMs: 600_000 };
  const sent = running(approved, { mode: 'location', url: 'https://m/op', resourceUrl: 'https://m/p', deadlineMs: 3600_000 }, { status: 202 }, now, policy);
  const polled = afterRead(sent, { kind: 'running', state: 'InProgress' }, now + minute, policy);
  const done = ended(polled, { runtimeStatus: 'Completed', customStatus: { upstreamState: 'Succeeded' } }, now + 2 * minute, { newId: () => 'e1' });
  expect(done.customStatus).toMatchObject({
    upstreamState: 'Succeeded',
    approval: { state: 'approved', decisions: [{ by: 'key:a00000000001' }, { by: 'key:a00000000002' }] },
  });
});
