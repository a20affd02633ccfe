/**
 * The one error type of the app, its table from code to HTTP status, and the function that
 * renders the documented error body.
 *
 * Errors that come from the upstream are not GatewayErrors: they are passed back as they came.
 */

export interface ErrorDetail {
  code: string;
  message: string;
  target?: string;
}

/** Stable codes, each with the status it is answered with. */
export const errorStatusByCode = {
  InvalidRequest: 400,
  InvalidRequestBody: 400,
  InvalidParameter: 400,
  InvalidJson: 400,
  UnsupportedMediaType: 415,
  MissingBearerToken: 401,
  Unauthorized: 401,
  ScopeNotAllowed: 403,
  OperationNotAllowed: 403,
  /** A state-changing request from a page of another origin (src/rules/crossSite.ts). */
  CrossSiteRequest: 403,
  /** The caller may see a request waiting for approval but may not decide it. */
  ApprovalNotAllowed: 403,
  /** The final answer of a start that waited for approval and was rejected or expired: nothing was sent upstream. */
  NotApproved: 403,
  NotFound: 404,
  /** The path names an operation, but not with this method: the answer's Allow header lists those it takes. */
  MethodNotAllowed: 405,
  Conflict: 409,
  OrchestrationTerminated: 409,
  OrchestrationRunning: 409,
  NotificationsPending: 409,
  OrchestrationEnded: 410,
  /** A decision on a request waiting for approval came at or after its expiry: it is not recorded. */
  ApprovalExpired: 410,
  NotifyTargetNotAllowed: 400,
  PayloadTooLarge: 413,
  /** The caller hung up during a `gateway-wait`: no one hears this answer; the call log records it (nginx's 499). */
  CallerGone: 499,
  RateLimited: 429,
  CallerRateLimited: 429,
  TooManyWaits: 429,
  /** Too many starts wait for approval (the caller's or the app's bound). */
  TooManyPendingApprovals: 429,
  InternalError: 500,
  UpstreamBadResponse: 502,
  UpstreamUnreachable: 502,
  UpstreamLinkRefused: 502,
  StartInterrupted: 502,
  StorageUnavailable: 503,
  UpstreamTimeout: 504,
  DeadlineExceeded: 504,
} as const;

export type ErrorCode = keyof typeof errorStatusByCode;

/** Most `details` entries an answer lists; the message counts the rest. */
export const maxListedDetails = 100;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly target?: string;
  readonly details?: ErrorDetail[];
  /** Extra response headers, e.g. Retry-After on a 429. */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { target?: string; details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = errorStatusByCode[code];
    this.target = options.target;
    // A bound for every thrower: an answer never lists more than this, however it was built.
    this.details = options.details?.slice(0, maxListedDetails);
    this.headers = options.headers;
  }
}

export interface ErrorBody {
  error: { code: string; message: string; target?: string; details?: ErrorDetail[] };
}

export function renderErrorBody(error: GatewayError): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.target === undefined ? {} : { target: error.target }),
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  };
}

/** Turns anything thrown into a GatewayError; what is not one already becomes an InternalError. */
export function toGatewayError(thrown: unknown): GatewayError {
  if (thrown instanceof GatewayError) return thrown;
  return new GatewayError('InternalError', 'The gateway failed to process the request.', { cause: thrown });
}
