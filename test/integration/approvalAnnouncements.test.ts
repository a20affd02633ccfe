/**
 * The Slack approval message posted to SLACK_APPROVAL_WEBHOOK_URL, against receivers on loopback:
 * posted once with its buttons; and, when the webhook answers an error or not at all, given up
 * within NOTIFY_TIMEOUT_MS without throwing, with one log line that names the webhook's origin only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announceApprovalRequest } from '../../src/chatops/slack/approvalAnnouncements';
import { parseConfig } from '../../src/settings/config';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import type { Services } from '../../src/services';
import { startChatPostReceiver } from '../helpers/chatPostReceiver';

const id = '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122';
const token = 'approvals-webhook-token-0001';

const state: OrchestrationState = {
  id,
  name: 'ApiManagementService_MigrateToStv2',
  runtimeStatus: 'Pending',
  input: { method: 'POST', path: '/subscriptions/s/resourceGroups/rg/providers/Vendor.ApiManagement/service/apim/migrateToStv2', query: [] },
  requestKey: 'k',
  startedBy: 'slack:T1/USTARTER',
  appBase: 'http://127.0.0.1:7071/api',
  customStatus: {
    upstreamState: 'Pending',
    approval: { state: 'waiting', required: 1, approvers: ['slack:T1/UAPPROVER'], expiresAt: '2026-11-28T12:00:00.000Z', decisions: [] },
  },
  createdTime: '2026-11-28T10:00:00.000Z',
  lastUpdatedTime: '2026-11-28T10:00:00.000Z',
};

function servicesWith(webhook: string, settings: Record<string, string> = {}): Services {
  const config = parseConfig({
    MANAGEMENT_BASE_URL: 'https://management.example.com',
    LIFECYCLE_BASE_URL: 'https://lcs.example.com',
    SLACK_SIGNING_SECRET: '0123456789abcdef0123456789abcdef',
    ACCESS_POLICY: JSON.stringify([{ callers: ['slack:T1/USTARTER'], allow: ['read'] }]),
    SLACK_APPROVAL_WEBHOOK_URL: webhook,
    NOTIFY_TIMEOUT_MS: '500',
    ...settings,
  });
  return { config, now: Date.now } as unknown as Services;
}

let logged: string[] = [];
beforeEach(() => {
  logged = [];
  jest.spyOn(console, 'error').mockImplementation((line: string) => void logged.push(line));
});
afterEach(() => jest.restoreAllMocks());

it('posts the message with its buttons once; nothing when Slack chat-ops is off or the request no longer waits', async () => {
  const receiver = await startChatPostReceiver();
  try {
    const webhook = `${receiver.origin}/services/T1/B1/${token}`;
    await announceApprovalRequest(servicesWith(webhook), state);
    expect(receiver.posts).toHaveLength(1);
    expect(receiver.posts[0]!.path).toBe(`/services/T1/B1/${token}`);
    expect(JSON.stringify(receiver.posts[0]!.body)).toContain('"action_id":"approve"');
    expect(JSON.stringify(receiver.posts[0]!.body)).not.toContain(token);
    await announceApprovalRequest(servicesWith(webhook, { ACCESS_POLICY: JSON.stringify([{ callers: ['key:0123456789ab'], allow: ['read'] }]) }), state);
    await announceApprovalRequest(servicesWith(webhook), {
      ...state,
      customStatus: { upstreamState: 'Pending', approval: { ...state.customStatus!.approval!, state: 'approved' } },
    });
    expect(receiver.posts).toHaveLength(1);
    expect(logged).toEqual([]);
  } finally {
    await receiver.close();
  }
});

it('gives up on a webhook that answers an error, or never answers, within NOTIFY_TIMEOUT_MS: no throw, one line naming its origin only', async () => {
  const failing = await startChatPostReceiver(() => 404);
  const silent: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentOrigin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  try {
    await expect(announceApprovalRequest(servicesWith(`${failing.origin}/services/T1/B1/${token}`), state)).resolves.toBeUndefined();
    await expect(announceApprovalRequest(servicesWith(`${silentOrigin}/services/T1/B1/${token}`), state)).resolves.toBeUndefined();
    expect(logged).toHaveLength(2);
    expect(JSON.parse(logged[0]!)).toMatchObject({ event: 'approval', step: 'announce-failed', id, target: failing.origin, error: 'HTTP 404' });
    expect(JSON.parse(logged[1]!)).toMatchObject({ target: silentOrigin, error: 'timeout' });
    expect(logged.join('\n')).not.toContain(token);
  } finally {
    await failing.close();
    await new Promise((resolve) => silent.close(resolve).closeAllConnections());
  }
});
