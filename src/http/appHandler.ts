/**
 * The adapter of the app's own routes: within the one frame (callFrame.ts), it applies the
 * access policy to the route, and gives the handler the call (src/calls/routeCall.ts) with the
 * request and invocation beside it.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { notAllowed } from '../calls';
import type { RouteCall } from '../calls';
import { actionOf, type AppRoute } from '../routes';
import { fillPath } from '../spec';
import { appBaseOf } from './appBase';
import { framed, type ServicesSource } from './callFrame';
import { callerGoneSignalOf } from './requestSignal';
import { rawQueryOf } from './requestQuery';

export interface AppCall extends RouteCall {
  request: HttpRequest;
  context: InvocationContext;
}

export type AppHandler = (
  route: AppRoute,
  handle: (call: AppCall) => Promise<HttpResponseInit>,
) => (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/** The adapter of the app's routes on `getServices` (the registrations give it, functions/). */
export function appHandlerOn(getServices: ServicesSource): AppHandler {
  return (route, handle) =>
    framed(route.name, getServices, async ({ request, context, services, correlationId, startedMs, caller, record }) => {
      const action = actionOf(route);
      // An anonymous route (health) is open to all: there is no caller to judge.
      const judged = route.authLevel !== 'anonymous';
      // Judged once: without a grant, a route open to starters lets the caller reach its own only.
      const granted = judged && services.access.policy.allows(caller, action);
      const starterOnly =
        judged && !granted && (route.openToStarter === true || (route.openToApprovers === true && services.access.policy.namesApprover(caller)));
      if (judged && !granted && !starterOnly) throw notAllowed(caller, action);
      record.decision = 'allowed';
      const appBase = appBaseOf(request.url, fillPath(route.route, request.params), services.config.APP_PUBLIC_URL);
      return handle({
        request,
        context,
        services,
        caller,
        correlationId,
        startedMs,
        appBase,
        routeName: route.name,
        starterOnly,
        query: rawQueryOf(request),
        headers: request.headers,
        signal: callerGoneSignalOf(request),
        record,
        log: (line) => context.log(line),
      });
    });
}
