/**
 * The start of a long-running operation under ACCESS_POLICY's approvals: sent at once as any
 * start, or, when a rule of the caller asks approval for it on its target, stored to wait for
 * approval with nothing sent upstream (docs/approvals.md). Every way a start is made goes
 * through here (the operation routes, restarts, chat commands), so none of them skips approval.
 */
import type { ApprovalRequirement } from '../access';
import { GatewayError } from '../errors';
import { waitingApproval } from '../approvals';
import type { HeldOutcome, StartOutcome, StartRequest } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import { redactSecrets } from '../rules';
import type { Services } from '../services';
import type { UpstreamResponse } from '../upstream';
import type { PreparedCall } from './preparedCall';

type HeldListener = (services: Services, state: OrchestrationState) => Promise<void>;
const heldListeners: HeldListener[] = [];

/**
 * Registers what is told of every start stored to wait for approval: functions/approvals.ts
 * registers the Slack approval message (chatops/approvalAnnouncements.ts), at load, as routes
 * are registered. Each is best effort and bounded, and never throws.
 */
export function onHeldStart(listener: HeldListener): void {
  heldListeners.push(listener);
}

/** The approval the prepared start needs, if a rule of its caller asks one for it on its target. */
export function approvalNeeded(services: Services, prepared: Pick<PreparedCall, 'operation' | 'caller' | 'targetPath'>): ApprovalRequirement | undefined {
  const { operation } = prepared;
  if (!operation.longRunning) return undefined;
  return services.access.policy.approvalFor(prepared.caller, { names: [operation.operationId, operation.name], access: operation.access }, prepared.targetPath);
}

/**
 * Starts the prepared call through `send`, or holds it for approval when it needs one (then
 * `send` is never called; the send is made once approved, from what is held). The approvers are
 * told of a held start once it is stored (see onHeldStart).
 */
export async function startOrHold(
  services: Services,
  prepared: PreparedCall,
  request: StartRequest,
  send: (pending: OrchestrationState) => Promise<UpstreamResponse>,
): Promise<StartOutcome | HeldOutcome> {
  const needed = approvalNeeded(services, prepared);
  if (!needed) return services.orchestrations.start(request, send);
  const { config } = services;
  const body = prepared.call.body;
  // What waits is stored until it is sent, and the app stores no secret.
  if (body && JSON.stringify(redactSecrets(body.value)) !== JSON.stringify(body.value)) {
    throw new GatewayError(
      'InvalidRequestBody',
      `${prepared.operation.operationId} waits for approval here (ACCESS_POLICY), and a start that waits is stored until it is sent; its body holds a secret field, which the app never stores. Send it without the secret, or have it started by a caller whose rules need no approval.`,
      { target: 'body' },
    );
  }
  const minutes = needed.expiresAfterMinutes ?? config.APPROVAL_DEFAULT_MINUTES;
  const approval = waitingApproval(needed.required, needed.approvers, services.now() + minutes * 60_000, prepared.caller);
  const outcome = await services.approvals.hold(
    request,
    // The body as read, not as received: with a key given twice the text would hold a value
    // nobody approved (and a secret the check above never saw), where the parsed body holds one.
    { url: prepared.url, headers: prepared.headers, ...(body ? { bodyText: body.value === undefined ? body.text : JSON.stringify(body.value) } : {}) },
    approval,
    { perCaller: config.APPROVAL_MAX_PENDING_PER_CALLER, total: config.APPROVAL_MAX_PENDING },
  );
  // Told after the answer, never before it: an announcement is best effort (bounded, each failure
  // logged by its listener), and a receiver that does not answer must not hold the start's answer.
  if (outcome.kind === 'waiting') void Promise.allSettled(heldListeners.map((listener) => listener(services, outcome.state)));
  return outcome;
}
