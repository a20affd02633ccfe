/**
 * The access policy applied to one call, shared by the documented
 * operations and the app's own routes: the operation or route allowed (else 403
 * `OperationNotAllowed`), the target within the caller's scopes (else 403 `ScopeNotAllowed`),
 * and an upstream call within the caller's rate (else 429 `CallerRateLimited` with
 * Retry-After). Everything is decided before anything is sent upstream; only a call that then
 * sends a request upstream keeps its draw on the rate.
 */
import type { Action, Grant } from '../access';
import type { CallKind } from '../access';
import { GatewayError } from '../errors';
import type { SummaryFilter } from '../orchestration';
import type { Services } from '../services';
import type { CallerIdentity } from '../callers';
import { isScopeAllowed } from '../rules';

/** The codes of a refusal by the policy: the call log records them as its decision. */
export const refusalCodes: ReadonlySet<string> = new Set(['OperationNotAllowed', 'ScopeNotAllowed', 'CallerRateLimited']);

/** The refusal of an action no rule allows the caller (403 `OperationNotAllowed`). */
export function notAllowed(caller: CallerIdentity, action: Pick<Action, 'names'>): GatewayError {
  return new GatewayError('OperationNotAllowed', `The caller (${caller.primary}) may not call ${action.names[0]} (see ACCESS_POLICY).`, {
    target: action.names[0],
  });
}

export function grantFor(services: Services, caller: CallerIdentity, action: Action): Grant {
  const grant = services.access.policy.grant(caller, action);
  if (!grant) throw notAllowed(caller, action);
  return grant;
}

export function assertWithinGrant(targetPath: string, grant: Grant): void {
  if (!isScopeAllowed(targetPath, grant.scopes)) {
    throw new GatewayError('ScopeNotAllowed', 'The caller may not act on that scope (see ACCESS_POLICY).', { target: `/${targetPath}` });
  }
}

/**
 * One call drawn from a caller's share, held until the call either sends a request upstream
 * (`spend`: the draw stays taken) or ends without one (`settle` gives it back): a refusal, a
 * duplicate start that joins a running one, a wait refused, send nothing and cost nothing.
 */
export class ShareDraw {
  #giveBack: (() => void) | undefined;

  constructor(giveBack?: () => void) {
    this.#giveBack = giveBack;
  }

  /** A request goes upstream: the draw is used. */
  spend(): void {
    this.#giveBack = undefined;
  }

  /** The call is over: a draw not used goes back to the share. */
  settle(): void {
    this.#giveBack?.();
    this.#giveBack = undefined;
  }
}

/** Draws one upstream call of `kind` from the caller's share, if its rules set one, or throws 429 `CallerRateLimited`. */
export async function takeCallerRate(services: Services, caller: CallerIdentity, grant: Grant, kind: CallKind): Promise<ShareDraw> {
  const perMinute = kind === 'reads' ? grant.rate?.readsPerMinute : grant.rate?.writesPerMinute;
  if (perMinute === undefined) return new ShareDraw();
  const taken = await services.access.rates.take(grant.rateSubject ?? caller.primary, kind, perMinute);
  if (!taken.allowed) {
    throw new GatewayError(
      'CallerRateLimited',
      `The caller (${caller.primary}) used its share of upstream ${kind} (${perMinute} a minute, see ACCESS_POLICY).`,
      {
        headers: { 'retry-after': String(taken.retryAfterSeconds) },
      },
    );
  }
  return new ShareDraw(taken.giveBack);
}

/** A list or purge filter held to what the caller may see: all with `admin` everywhere, else its own and those in its `admin` scopes. */
export function visibleFilter(services: Services, caller: CallerIdentity, filter: SummaryFilter): SummaryFilter {
  const admin = services.access.policy.adminGrant(caller);
  return admin && !admin.scopes ? filter : { ...filter, visibleTo: { startedBy: caller.primary, adminScopes: admin?.scopes } };
}
