/**
 * The approval routes: a decision on a start waiting for approval
 * (`POST orchestrations/{id}/raiseEvent/Approval`) and the list of those a caller may approve
 * (`GET approvals`). Registration and glue only: who may decide, and what a decision does, are in
 * src/approvals and the engine (src/orchestration/heldStarts.ts).
 */
import { matchesAny } from '../src/access';
import { appRoutes } from '../src/routes';
import { decideApproval } from '../src/approvals';
import { announceHeldStart } from '../src/chatops';
import { onHeldStart } from '../src/calls';
import { approvalDecisionBody } from '../src/routes';
import { GatewayError } from '../src/errors';
import { getServices } from '../src/app';
import { appHandlerOn } from '../src/http';
import { parseJsonBody } from '../src/rules';
import { jsonResponse } from '../src/calls';
import { invalidRequest, ProblemList } from '../src/rules';
import { statusDocument } from '../src/orchestration';

const appHandler = appHandlerOn(getServices);

const idPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A decision is a boolean and a short reason: a larger body is not one. */
const maxBodyBytes = 8 * 1024;

export const decideApprovalRoute = appHandler(appRoutes.approvalsDecide, async (call) => {
  const id = call.request.params.id ?? '';
  if (!idPattern.test(id)) throw new GatewayError('NotFound', 'No orchestration has that id.', { target: 'id' });
  const body = parseJsonBody(new Uint8Array(await call.request.arrayBuffer()), call.request.headers.get('content-type'), maxBodyBytes, 'body');
  if (!body)
    throw new GatewayError('InvalidRequest', 'A JSON body is required: {"approved": true} to approve, {"approved": false, "reason": "..."} to reject.', {
      target: 'body',
    });
  const parsed = approvalDecisionBody.safeParse(body.value);
  if (!parsed.success)
    throw invalidRequest(
      ProblemList.ofIssues(parsed.error.issues, 'InvalidRequestBody'),
      'The decision is not valid: send {"approved": true|false, "reason": "..."}.',
    );
  const route = call.request.headers.get('x-gateway-client')?.trim().toLowerCase() === 'console' ? 'console' : 'api';
  const state = await decideApproval(call.services, call.caller, id, { ...parsed.data, route });
  return jsonResponse(202, statusDocument(state, call.appBase), call.correlationId);
});

export const listApprovalsRoute = appHandler(appRoutes.approvalsList, async (call) => {
  const { services, caller } = call;
  const waiting = await services.approvals.waiting(services.config.APPROVAL_MAX_PENDING);
  const value = waiting
    .filter((entry) => matchesAny(caller, entry.approvers) && !caller.selectors.includes(entry.startedBy))
    .sort((a, b) => a.expiresAt - b.expiresAt)
    .map((entry) => ({
      id: entry.id,
      name: entry.name,
      startedBy: entry.startedBy,
      expiresAt: new Date(entry.expiresAt).toISOString(),
      statusQueryGetUri: `${call.appBase}/orchestrations/${entry.id}`,
      decidePostUri: `${call.appBase}/orchestrations/${entry.id}/raiseEvent/Approval`,
    }));
  return jsonResponse(200, { value }, call.correlationId);
});

// The chat platforms hear of each start stored to wait (Slack's approvers' channel, when SLACK_APPROVAL_WEBHOOK_URL is set).
onHeldStart(announceHeldStart);
