/**
 * The approval a start waits for, kept in its status document as `customStatus.approval`: how
 * many approvals it needs, from whom, until when, and every decision made on it. Plain JSON, as
 * the rest of the document, so any instance can judge and continue it. Declared with the
 * document it is part of; what it means (who may decide, when it is sent or ends) is src/approvals'.
 */

/** Where a decision was made: the API, the console (the API with `x-gateway-client: console`), a chat command, a Slack button. */
export type ApprovalRoute = 'api' | 'console' | 'chat-command' | 'slack-button';

export type ApprovalState = 'waiting' | 'approved' | 'rejected' | 'expired';

export interface ApprovalDecisionRecord {
  /** The deciding caller's primary name (`key:…`, `principal:…`, `slack:…`, `teams:…`). */
  by: string;
  /**
   * Every name the caller decided under (keys as fingerprints, its principal, its chat user; no
   * role): a later decision sharing one is the same caller's. Absent in decisions recorded before.
   */
  identities?: string[];
  approved: boolean;
  reason?: string;
  /** ISO 8601. */
  at: string;
  route: ApprovalRoute;
}

export interface ApprovalStatus {
  state: ApprovalState;
  /** Approvals needed from distinct callers. */
  required: number;
  /** The selectors that may approve, as the rule wrote them. */
  approvers: string[];
  /** ISO 8601: past it, a waiting request ends as expired. */
  expiresAt: string;
  /**
   * Every name the starter called with (as `identities` of a decision): a decision under any of
   * them, or the same AAD object id in Teams, is the starter's own. Absent in starts stored before.
   */
  starter?: string[];
  decisions: ApprovalDecisionRecord[];
}
