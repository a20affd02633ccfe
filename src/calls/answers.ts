/**
 * Answers of the app: its own errors in the documented shape, and upstream answers passed
 * back with the headers a caller needs (request ids, throttling, LRO and concurrency headers).
 */
import type { HttpResponseInit } from '@azure/functions';
import { GatewayError, renderErrorBody } from '../errors';
import type { UpstreamResponse } from '../upstream';
import { correlationHeader } from '../rules';
import { ownErrorCode, type WithOwnErrorCode } from '../rules';

const passedBackHeaders = new Set(['content-type', 'retry-after', 'retry-after-ms', 'x-ms-retry-after-ms', 'etag', 'location', 'azure-asyncoperation']);

export function isPassedBackHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return passedBackHeaders.has(lower) || lower.endsWith('request-id') || lower.startsWith('x-ms-ratelimit-');
}

/** The app's own error answer in the documented shape, marked as the app's (see src/rules/errorCodes.ts). */
export function errorResponse(error: GatewayError, correlationId: string): HttpResponseInit & WithOwnErrorCode {
  return {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8', [correlationHeader]: correlationId, ...error.headers },
    body: JSON.stringify(renderErrorBody(error)),
    [ownErrorCode]: error.code,
  };
}

export function jsonResponse(status: number, body: unknown, correlationId: string, headers: Record<string, string> = {}): HttpResponseInit {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', [correlationHeader]: correlationId, ...headers },
    body: JSON.stringify(body),
  };
}

/** The upstream's answer as it came; `bodyText` replaces the body when the app rewrote it. */
export function upstreamResponse(response: UpstreamResponse, correlationId: string, bodyText = response.bodyText): HttpResponseInit {
  const headers: Record<string, string> = { [correlationHeader]: correlationId };
  for (const [name, value] of Object.entries(response.headers)) {
    if (isPassedBackHeader(name)) headers[name] = value;
  }
  return { status: response.status, headers, body: bodyText };
}
