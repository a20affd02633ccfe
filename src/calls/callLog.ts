/**
 * One structured line per call. It names the operation, target, caller, statuses, duration
 * and correlation id; it never holds a body, a query string or a header value but the upstream's
 * request ids (of a checked shape), so no secret can reach it.
 */
import type { HttpResponseInit } from '@azure/functions';
import type { RemainingBudget } from '../upstream/upstreamBudget';
import type { UpstreamIds } from '../telemetry/upstreamIds';
import { errorCodeOf } from '../rules/errorCodes';

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

/** The record of a call to one of the app's own routes: the target is the path, never the query. */
export function routeCallRecord(
  call: { functionName: string; url: string; startedMs: number; correlationId: string },
  caller: Pick<CallRecord, 'caller' | 'principalName' | 'unverifiedTokenSubject'>,
  decision: string | undefined,
  response: HttpResponseInit,
): string {
  return formatCallRecord({
    operation: call.functionName,
    target: new URL(call.url).pathname,
    ...caller,
    decision,
    status: response.status ?? 200,
    durationMs: Date.now() - call.startedMs,
    correlationId: call.correlationId,
    errorCode: errorCodeOf(response),
  });
}

/**
 * The record of one decision on a start waiting for approval, whichever route made it: who, which
 * way, through what, and where the start stands after it. Never the reason (free text, kept in
 * the status document and told in the end notification).
 */
export function approvalRecord(record: {
  id: string;
  name: string;
  caller: string;
  approved: boolean;
  route: string;
  standing?: string;
  runtimeStatus: string;
}): string {
  return JSON.stringify({ event: 'approval', ...record });
}
