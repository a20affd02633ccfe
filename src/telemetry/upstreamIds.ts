/**
 * The ids a management service answer carries, which its support asks for first:
 * `x-ms-request-id` (this request) and `x-ms-correlation-request-id` (the client's correlation
 * id as the service recorded it). Only ids of a safe shape are kept, so a header cannot inject
 * text into a log line, a span or a stored document.
 */
export interface UpstreamIds {
  requestId?: string;
  correlationRequestId?: string;
}

const safeId = /^[A-Za-z0-9._:-]{1,128}$/;

/** An id header's value when it has a safe shape, else undefined. */
export function safeUpstreamId(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && safeId.test(trimmed) ? trimmed : undefined;
}

/** The ids of an answer's headers (lower-case names), or undefined when it has neither. */
export function upstreamIdsOf(headers: Record<string, string> | undefined): UpstreamIds | undefined {
  const requestId = safeUpstreamId(headers?.['x-ms-request-id']);
  const correlationRequestId = safeUpstreamId(headers?.['x-ms-correlation-request-id']);
  if (!requestId && !correlationRequestId) return undefined;
  return { ...(requestId ? { requestId } : {}), ...(correlationRequestId ? { correlationRequestId } : {}) };
}
