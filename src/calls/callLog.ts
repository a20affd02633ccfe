/**
 * One structured line per call. It names the operation, target, caller, statuses, duration
 * and correlation id; it never holds a body, a query string or a header value but the upstream's
 * request ids (of a checked shape), so no secret can reach it.
 */
import type { HttpResponseInit } from '@azure/functions';
import { callerLogFields, type CallerIdentity } from '../callers';
import { remainingBudgetOf, type RemainingBudget } from '../upstream';
import type { UpstreamResponse } from '../upstream';
import { upstreamIdsOf, type UpstreamIds } from '../telemetry';
import { errorCodeOf } from '../rules';

export interface CallRecord {
  operation: string;
  target: string;
  caller: string;
  principalName?: string;
  unverifiedTokenSubject?: string;
  /** What ACCESS_POLICY decided: `allowed`, or the refusal's code; absent when the request was refused before (bad input). */
  decision?: string;
  status: number;
  upstreamStatus?: number;
  attempts?: number;
  /** The management service's remaining-request counts its answer gave (x-ms-ratelimit-remaining-*). */
  upstreamRemaining?: RemainingBudget;
  /** The upstream's `x-ms-request-id` and `x-ms-correlation-request-id`, which its support asks for. */
  upstreamIds?: UpstreamIds;
  durationMs: number;
  correlationId: string;
  errorCode?: string;
}

export function formatCallRecord(record: CallRecord): string {
  return JSON.stringify({ event: 'call', ...record });
}

/**
 * What the record of one call says, filled in as the call goes (callFrame.ts writes it once the
 * call is answered): which operation or route, its target, who called, what the access policy
 * decided, and the upstream's answer when one came.
 */
export interface CallRecordDraft {
  /** The documented operation's id; else the route's name. */
  operation?: string;
  /** The upstream path (`/subscriptions/...`), `(invalid)` for a call refused before it was known; else the request's path. */
  target?: string;
  caller?: CallerIdentity;
  decision?: string;
  upstream?: Pick<UpstreamResponse, 'status' | 'attempts' | 'headers'>;
}

/** The record's line: `defaults` name the function and the request's path, for what the draft leaves out. */
export function callRecordLine(
  draft: CallRecordDraft,
  defaults: { operation: string; target: string; caller: CallerIdentity },
  response: HttpResponseInit,
  at: { durationMs: number; correlationId: string },
): string {
  const { upstream } = draft;
  return formatCallRecord({
    operation: draft.operation ?? defaults.operation,
    target: draft.target ?? defaults.target,
    ...callerLogFields(draft.caller ?? defaults.caller),
    decision: draft.decision,
    status: response.status ?? 200,
    upstreamStatus: upstream?.status,
    attempts: upstream?.attempts,
    upstreamRemaining: upstream && remainingBudgetOf(upstream.headers),
    upstreamIds: upstream && upstreamIdsOf(upstream.headers),
    durationMs: at.durationMs,
    correlationId: at.correlationId,
    errorCode: errorCodeOf(response),
  });
}
