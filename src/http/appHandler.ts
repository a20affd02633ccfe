/**
 * The adapter of the app's own routes: it gives the handler the services, the correlation id
 * and the app's base URL, and turns anything thrown into the documented error answer.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { toGatewayError } from '../errors';
import { getServices, type Services } from '../services';
import { errorCodeOf, formatCallRecord } from './callLog';
import { callerOf } from './caller';
import { fillPath } from '../spec/catalogue';
import { appBaseOf } from './appBase';
import { correlationIdOf } from './correlation';
import { rawQueryOf } from './requestQuery';
import { sanitizeText } from './redaction';
import { errorResponse } from './responses';

export interface AppCall {
  request: HttpRequest;
  context: InvocationContext;
  services: Services;
  correlationId: string;
  /** `https://host/api`: the base the app's links are built on (see appBaseOf). */
  appBase: string;
  /** When the request arrived (ms since the epoch): waits are counted from it. */
  startedMs: number;
}

/** `route` is the function's own route template, e.g. `orchestrations/{id}`. */
export function appHandler(route: string, handle: (call: AppCall) => Promise<HttpResponseInit>) {
  return async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
    const correlationId = correlationIdOf(request.headers);
    const startedMs = Date.now();
    let response: HttpResponseInit;
    let services: Services | undefined;
    try {
      services = getServices();
      response = await handle({ request, context, services, correlationId, appBase: appBaseOf(request.url, fillPath(route, request.params), services.config.APP_PUBLIC_URL), startedMs });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      if (error.status >= 500) context.error(sanitizeText(`${context.functionName} failed (${error.code}): ${String((thrown as Error)?.stack ?? thrown)}`));
      response = errorResponse(error, correlationId);
    }
    // The same record as the documented operations leave; the target is the path, never the query.
    context.log(
      formatCallRecord({
        operation: context.functionName,
        target: new URL(request.url).pathname,
        ...callerOf(request.headers, rawQueryOf(request), services?.config.WEBSITE_AUTH_ENABLED ?? false),
        status: response.status ?? 200,
        durationMs: Date.now() - startedMs,
        correlationId,
        errorCode: errorCodeOf(response),
      }),
    );
    return response;
  };
}
