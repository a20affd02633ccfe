/**
 * The adapter of the app's own routes: it applies the access policy to the route, gives the
 * handler the services, the caller, the correlation id and the app's base URL, and turns
 * anything thrown into the documented error answer.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { actionOf, type AppRoute } from '../routes/appRoutes';
import { getServices, type Services } from '../services';
import { notAllowed } from '../calls/authorization';
import { inCallFrame } from './callFrame';
import { callerOf, type CallerIdentity } from '../callers/callerIdentity';
import { fillPath } from '../spec/catalogue';
import { appBaseOf } from './appBase';
import { rawQueryOf } from './requestQuery';
import { traceIncoming } from '../telemetry/hooks';

export interface AppCall {
  request: HttpRequest;
  context: InvocationContext;
  services: Services;
  correlationId: string;
  /** `https://host/api`: the base the app's links are built on (see appBaseOf). */
  appBase: string;
  /** When the request arrived (ms since the epoch): waits are counted from it. */
  startedMs: number;
  caller: CallerIdentity;
  /**
   * No rule allows the route to the caller, which reaches it only as a starter (an
   * `openToStarter` route): the handler answers on the caller's own orchestrations only.
   */
  starterOnly: boolean;
}

/** `route` is the declared route (src/routes/appRoutes.ts): its template, name and access class. */
export function appHandler(route: AppRoute, handle: (call: AppCall) => Promise<HttpResponseInit>) {
  return traceIncoming(route.name, (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> =>
    inCallFrame(
      request,
      context,
      () => callerOf(request.headers, rawQueryOf(request), false),
      async ({ correlationId, startedMs, record }) => {
        const services = getServices();
        const caller = (record.caller = callerOf(request.headers, rawQueryOf(request), services.config.WEBSITE_AUTH_ENABLED));
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
        return handle({ request, context, services, correlationId, appBase, startedMs, caller, starterOnly });
      },
    ),
  );
}
