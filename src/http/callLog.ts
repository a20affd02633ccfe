/**
 * One structured line per call. It names the operation, target, caller, statuses, duration
 * and correlation id; it never holds a body, a header value or a query string, so no secret
 * can reach it.
 */
export interface CallRecord {
  operation: string;
  target: string;
  caller: string;
  status: number;
  upstreamStatus?: number;
  attempts?: number;
  durationMs: number;
  correlationId: string;
  errorCode?: string;
}

export interface CallLogger {
  (line: string): void;
}

export function formatCallRecord(record: CallRecord): string {
  return JSON.stringify({ event: 'call', ...record });
}
