/**
 * The frame around a call to one of the app's own routes: its correlation id, anything thrown
 * turned into the documented error answer (a failure logged, never its secrets), and the call
 * record every call leaves.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { toGatewayError } from '../errors';
import { refusalCodes } from '../calls/authorization';
import { routeCallRecord } from '../calls/callLog';
import { callerLogFields, type CallerIdentity } from '../callers/callerIdentity';
import { correlationIdOf } from './correlation';
import { failureForLog } from '../rules/redaction';
import { errorResponse } from '../calls/answers';

export interface FramedCall {
  correlationId: string;
  /** When the request arrived (ms since the epoch). */
  startedMs: number;
  /** What the call record says, filled in as the handler learns it: who called, what the access policy decided. */
  record: { caller?: CallerIdentity; decision?: string };
}

/** `unknownCaller`: who the record names when the handler stopped before knowing its caller. */
export async function inCallFrame(
  request: HttpRequest,
  context: InvocationContext,
  unknownCaller: () => CallerIdentity,
  handle: (call: FramedCall) => Promise<HttpResponseInit>,
): Promise<HttpResponseInit> {
  const call: FramedCall = { correlationId: correlationIdOf(request.headers), startedMs: Date.now(), record: {} };
  const { correlationId, startedMs, record } = call;
  let response: HttpResponseInit;
  try {
    response = await handle(call);
  } catch (thrown) {
    const error = toGatewayError(thrown);
    if (refusalCodes.has(error.code)) record.decision = error.code;
    if (error.status >= 500) context.error(`${context.functionName} failed (${error.code}): ${failureForLog(thrown)}`);
    response = errorResponse(error, correlationId);
  }
  // The same record as the documented operations leave.
  context.log(
    routeCallRecord(
      { functionName: context.functionName, url: request.url, startedMs, correlationId },
      callerLogFields(record.caller ?? unknownCaller()),
      record.decision,
      response,
    ),
  );
  return response;
}
