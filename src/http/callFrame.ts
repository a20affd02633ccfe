/**
 * The one frame around every way into the app (a documented operation, one of the app's own
 * routes, a chat platform's route): its trace, its correlation id, who calls (built once, here),
 * anything thrown turned into the documented error answer (a failure of 500 or more logged,
 * never its secrets), and the one call record every call leaves (src/calls/callLog.ts).
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { callerOf, type CallerIdentity } from '../callers';
import { errorResponse } from '../calls';
import { refusalCodes } from '../calls';
import { callRecordLine, type CallRecordDraft } from '../calls';
import { GatewayError, toGatewayError } from '../errors';
import { crossSiteReasonOf } from '../rules';
import { correlationIdOf } from '../rules';
import { failureForLog } from '../rules';
import type { Services } from '../services';
import { callTraceOf, recordUpstreamIdsOnCall, traceIncoming, type CallTrace } from '../telemetry';
import { rawQueryOf } from './requestQuery';

/** Where a handler gets the app's collaborators: given by its registration (functions/), built on first use. */
export type ServicesSource = () => Services;

export interface FramedCall {
  request: HttpRequest;
  context: InvocationContext;
  services: Services;
  correlationId: string;
  /** When the request arrived (ms since the epoch): waits are counted from it. */
  startedMs: number;
  /** Who calls, as a function key, App Service Authentication or nobody names it (a chat route names its user itself, on `record`). */
  caller: CallerIdentity;
  /** What the call record says, filled in as the handler learns it. */
  record: CallRecordDraft;
  /** The call's trace, handed on by hand to its upstream requests (`passTrace`). */
  callTrace?: CallTrace;
}

const anonymous: CallerIdentity = { primary: 'anonymous', selectors: [] };

/**
 * A state-changing request from another origin's page is refused before anything is read or
 * judged (src/rules/crossSite.ts says why); a chat platform's route is signed by the platform
 * instead, and takes no browser's session.
 */
function refuseCrossSite(request: HttpRequest, publicUrl: string | undefined): void {
  const ownOrigins = [new URL(request.url).origin, ...(publicUrl ? [new URL(publicUrl).origin] : [])].map((origin) => origin.toLowerCase());
  const reason = crossSiteReasonOf(request.method, request.headers, ownOrigins);
  if (!reason) return;
  throw new GatewayError(
    'CrossSiteRequest',
    `This request changes something and came from a page of another origin (${reason}), which could be acting in a signed-in user's name: it is refused. Send it from a script, an SDK or the app's own console.`,
  );
}

export interface FrameOptions {
  /** Hand the call's trace to the handler instead of entering it (the documented operations: see telemetry/hooks.ts). */
  passTrace?: boolean;
  /** The caller is not the HTTP request's (a chat route's is its platform's user, set on the record): none is built. */
  chatUser?: boolean;
}

/** A handler of `name` (the span's and, unless the handler says otherwise, the record's operation) within the frame. */
export function framed<Rest extends unknown[]>(
  name: string,
  getServices: ServicesSource,
  handle: (call: FramedCall, ...rest: Rest) => Promise<HttpResponseInit>,
  options: FrameOptions = {},
): (request: HttpRequest, context: InvocationContext, ...rest: Rest) => Promise<HttpResponseInit> {
  return traceIncoming<Rest>(
    name,
    async (request, context, ...rest) => {
      const correlationId = correlationIdOf(request.headers);
      const startedMs = Date.now();
      const record: CallRecordDraft = {};
      let caller = anonymous;
      let response: HttpResponseInit;
      const callTrace = options.passTrace ? callTraceOf(context) : undefined;
      try {
        const services = getServices();
        if (!options.chatUser) {
          caller = record.caller = callerOf(request.headers, rawQueryOf(request), services.config.WEBSITE_AUTH_ENABLED);
          refuseCrossSite(request, services.config.APP_PUBLIC_URL);
        }
        response = await handle({ request, context, services, correlationId, startedMs, caller, record, callTrace }, ...rest);
      } catch (thrown) {
        const error = toGatewayError(thrown);
        if (refusalCodes.has(error.code)) record.decision = error.code;
        if (error.status >= 500) context.error(`${record.operation ?? context.functionName} failed (${error.code}): ${failureForLog(thrown)}`);
        response = errorResponse(error, correlationId);
      }
      // Without its services (settings that do not parse) the record names the caller by its key alone.
      const caller0 = record.caller ?? (options.chatUser ? anonymous : callerOf(request.headers, rawQueryOf(request), false));
      const defaults = { operation: context.functionName, target: new URL(request.url).pathname, caller: caller0 };
      context.log(callRecordLine(record, defaults, response, { durationMs: Date.now() - startedMs, correlationId }));
      if (record.upstream) recordUpstreamIdsOnCall(record.upstream.headers, callTrace);
      return response;
    },
    options.passTrace ? { passTrace: true } : {},
  );
}
