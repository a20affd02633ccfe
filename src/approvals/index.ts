/** The two-person rule: starts held for approval, the decisions on them (who may decide, when they are sent or end), and the places of the starts that wait. */
export { approvalOf, decideApproval, maxReasonChars } from './approvalDecisions';
export type { ApprovalRoute } from './approvalDecisions';
export { approvalHolds, waitingApproval, waitingRetryAfterOf } from './approvalTransitions';
export { ApprovalWaits } from './approvalWaits';
export { Approvals } from './approvals';
