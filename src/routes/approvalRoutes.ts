/**
 * The approval routes (src/routes/appRoutes.ts spreads them in, functions/approvals.ts registers them):
 * a decision on a start waiting for approval, after Durable Functions' `raiseEvent`, and the
 * list of waiting starts a caller may approve. Both are open to the callers a rule names as
 * approvers; each answer is judged on the request itself (docs/approvals.md).
 */
import { z } from 'zod';
import { appRoute } from './routeKit';

/** The longest reason a decision carries (approvalDecisions.ts applies it to every route). */
const maxReason = 500;

/** The body of a decision. */
export const approvalDecisionBody = z.strictObject({
  approved: z.boolean({ error: 'approved must be true (approve) or false (reject)' }),
  reason: z.string().max(maxReason, `reason must be at most ${maxReason} characters`).optional(),
});

export const approvalRoutes = {
  approvalsDecide: appRoute(
    {
      // Open to every caller with a key: who may decide is judged on the request itself, and one
      // the caller may not see answers 404 as if it did not exist, whatever its rules.
      name: 'approvals-decide',
      method: 'POST',
      route: 'orchestrations/{id}/raiseEvent/Approval',
      authLevel: 'function',
      access: 'write',
      openToStarter: true,
      tag: 'approvals',
      summary:
        'Approve or reject a start that waits for approval (an ACCESS_POLICY rule with `approval`); the header x-gateway-client: console marks a decision made in the console',
    },
    ({ orchestrationId, statusDocument }) => ({
      params: orchestrationId,
      body: approvalDecisionBody,
      responses: {
        202: {
          description: 'Recorded: the status document after the decision (approved: sent upstream at once, or by the next poller run)',
          schema: statusDocument,
        },
        400: { description: 'The body is not { "approved": true|false, "reason"?: "..." } (InvalidRequestBody, InvalidJson)' },
        403: { description: 'ApprovalNotAllowed: the caller may see the request but not decide it (its starter, or not among its approvers)' },
        404: { description: 'No such orchestration that the caller may see' },
        409: { description: 'Conflict: it does not wait for approval (any more), or the caller decided it already' },
        410: { description: 'OrchestrationEnded: it ended; ApprovalExpired: its expiry passed' },
      },
    }),
  ),
  approvalsList: appRoute(
    {
      name: 'approvals-list',
      method: 'GET',
      route: 'approvals',
      authLevel: 'function',
      access: 'read',
      openToApprovers: true,
      tag: 'approvals',
      summary: 'The starts waiting for approval that the caller may approve (at most APPROVAL_MAX_PENDING, from their markers: no document is read)',
    },
    () => ({
      responses: {
        200: {
          description: 'The waiting starts, earliest expiry first',
          schema: z.object({
            value: z.array(
              z.object({
                id: z.string(),
                name: z.string(),
                startedBy: z.string(),
                expiresAt: z.string(),
                statusQueryGetUri: z.string(),
                decidePostUri: z.string(),
              }),
            ),
          }),
        },
      },
    }),
  ),
};
