/**
 * The HTTP adapter of the documented operations: a request becomes the plain call the pipeline
 * runs (src/calls/operationCall.ts), within the one frame (callFrame.ts). The `{scope}`
 * operations share one function on a catch-all route constrained by a regex that matches only
 * their suffixes, so it cannot shadow another route (the real host tries overlapping routes in
 * function-name order, azure-functions-host#9876); it picks the operation by method and suffix.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { errorResponse } from '../calls';
import { notifyHeader } from '../calls';
import { forwardedCallerHeaders, runOperation } from '../calls';
import { GatewayError } from '../errors';
import { correlationIdOf } from '../rules';
import { resolvePathTemplate, type OperationSpec } from '../spec';
import { appBaseOf } from './appBase';
import { framed, type ServicesSource } from './callFrame';
import { bodyBytesOf } from './requestBody';
import { callerGoneSignalOf } from './requestSignal';

/** `params` replaces the route's own, for the `{scope}` dispatcher, which derives the documented ones. */
export type OperationHandler = (request: HttpRequest, context: InvocationContext, params?: Record<string, string>) => Promise<HttpResponseInit>;

/** The handler of one documented operation. */
export function operationHandler(operation: OperationSpec, getServices: ServicesSource): OperationHandler {
  return framed(
    operation.operationId,
    getServices,
    async ({ request, services, caller, correlationId, startedMs, record, callTrace }, params: Record<string, string> = request.params) => {
      // Parsed once: its query (as sent: see requestQuery.ts) holds the call's parameters, its path the app's base.
      const requestUrl = new URL(request.url);
      const header = (name: string) => request.headers.get(name) ?? undefined;
      const forwardedHeaders: Record<string, string> = {};
      for (const name of forwardedCallerHeaders) {
        const value = header(name);
        if (value) forwardedHeaders[name] = value;
      }
      const { response } = await runOperation(services, {
        operation,
        caller,
        params,
        query: requestUrl.searchParams,
        body: { contentType: request.headers.get('content-type'), read: () => bodyBytesOf(request) },
        authorization: header('authorization'),
        forwardedHeaders,
        notify: header(notifyHeader),
        correlationId,
        startedMs,
        appBaseFor: (targetPath) => appBaseOf(requestUrl, targetPath, services.config.APP_PUBLIC_URL),
        signal: callerGoneSignalOf(request),
        callTrace,
        record,
      });
      return response;
    },
    { passTrace: true },
  );
}

export const scopeRouteParameter = 'scopePath';

function suffixOf(operation: OperationSpec, providerNamespace: string): string {
  return resolvePathTemplate(operation, providerNamespace).slice('{scope}/'.length);
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `{*scopePath:regex(^.+/(suffix1|suffix2)$)}`. The expression avoids `?`, `{`, `}`, `[` and `]`,
 * which ASP.NET route templates give meanings of their own.
 */
export function scopeRouteTemplate(scopeOperations: readonly OperationSpec[], providerNamespace: string): string {
  const suffixes = [...new Set(scopeOperations.map((operation) => escapeRegex(suffixOf(operation, providerNamespace))))].join('|');
  return `{*${scopeRouteParameter}:regex(^.+/(${suffixes})$)}`;
}

/** The methods the `{scope}` function is registered for: every one a scope operation takes. */
export function scopeRouteMethods(scopeOperations: readonly OperationSpec[]): OperationSpec['method'][] {
  return [...new Set(scopeOperations.map((operation) => operation.method))];
}

/**
 * The `{scope}` function: the operation whose suffix ends the path and whose method is the
 * request's. A suffix taken by none with this method answers 405 with `Allow`.
 */
export function scopeDispatcher(entries: readonly { operation: OperationSpec; handler: OperationHandler }[], providerNamespace: string): OperationHandler {
  const routes = entries.map((entry) => ({ ...entry, suffix: `/${suffixOf(entry.operation, providerNamespace)}`.toLowerCase() }));
  return async (request, context) => {
    const path = request.params[scopeRouteParameter] ?? '';
    const lower = path.toLowerCase();
    const onPath = routes.filter((route) => lower.endsWith(route.suffix));
    const route = onPath.find((candidate) => candidate.operation.method === request.method.toUpperCase());
    if (route) return route.handler(request, context, { scope: path.slice(0, path.length - route.suffix.length) });
    const correlationId = correlationIdOf(request.headers);
    if (onPath.length === 0) return errorResponse(new GatewayError('NotFound', 'No operation matches this path.'), correlationId);
    const allow = [...new Set(onPath.map((candidate) => candidate.operation.method))].join(', ');
    return errorResponse(
      new GatewayError('MethodNotAllowed', `${request.method.toUpperCase()} is not an operation of this path; it takes ${allow}.`, { headers: { allow } }),
      correlationId,
    );
  };
}
