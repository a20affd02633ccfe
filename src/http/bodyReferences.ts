/**
 * The resources a request body names besides its target: an identity to attach
 * (`identity.userAssignedIdentities`, keyed by resource id), a subnet to join, a workspace to
 * write to. The upstream acts with the app's own identity in `managed` mode, so a body naming a
 * resource outside the caller's scopes would reach past them: every string value and object key
 * that reads as an ARM resource id (`/subscriptions/…`) is held to the same scopes as the target.
 */
import { GatewayError } from '../errors';
import { isScopeAllowed } from './scopeGuard';

const resourceIdPattern = /^\/subscriptions\/[^/]+/i;

/** Each resource id in `value` with where it is (a JSON path); walks at most the body's own depth (64). */
function* resourceIdsIn(value: unknown, at: string): Generator<{ id: string; at: string }> {
  if (typeof value === 'string') {
    if (resourceIdPattern.test(value)) yield { id: value, at };
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* resourceIdsIn(item, `${at}[${index}]`);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const path = at ? `${at}.${key}` : key;
      if (resourceIdPattern.test(key)) yield { id: key, at: path };
      yield* resourceIdsIn(item, path);
    }
  }
}

/** Refuses (403 `ScopeNotAllowed`) a body naming a resource outside ALLOWED_SCOPES or the caller's scopes. */
export function assertBodyWithinScopes(body: unknown, allowedScopes: readonly string[] | undefined, callerScopes: readonly string[] | undefined): void {
  if (allowedScopes === undefined && callerScopes === undefined) return;
  for (const { id, at } of resourceIdsIn(body, '')) {
    if (!isScopeAllowed(id, allowedScopes)) {
      throw new GatewayError('ScopeNotAllowed', `The request body names a resource outside the scopes this app may act on (see ALLOWED_SCOPES): ${at}.`, { target: at });
    }
    if (!isScopeAllowed(id, callerScopes)) {
      throw new GatewayError('ScopeNotAllowed', `The request body names a resource outside the caller's scopes (see ACCESS_POLICY): ${at}.`, { target: at });
    }
  }
}
