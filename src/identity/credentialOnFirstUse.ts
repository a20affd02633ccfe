/**
 * A credential built on its first token request, so `@azure/identity` (with MSAL, the largest
 * part of what the app could load) is loaded then and not at start (src/loading/lazyPackages.ts). A
 * package that does not load, or settings the credential refuses, are the app's failure (500),
 * never a refused token (401).
 *
 * Every token request has a time limit (TOKEN_TIMEOUT_MS). A managed identity endpoint that
 * holds one request open would otherwise hold it for good (ManagedIdentityCredential hands MSAL
 * no abort signal) and every request queued behind it: past the limit the request fails, the
 * credential is let go, and the next use builds a fresh one and asks again.
 */
import type * as Identity from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { GatewayError } from '../errors';
import { identityPackage } from '../loading';

/** The token requests in flight, by what they are for: what `health` names when a dependency does not answer. */
const inFlight = new Map<object, { usedFor: string; sinceMs: number }>();

/** What each token request in flight is for, and since when (ms since the epoch), the longest waiting first. */
export function tokenWaits(): { usedFor: string; sinceMs: number }[] {
  return [...inFlight.values()].sort((a, b) => a.sinceMs - b.sinceMs);
}

/** `usedFor` names what the tokens are for (`storage`, `the management upstream`, ...) in `health`. */
export function credentialOnFirstUse(create: (identity: typeof Identity) => TokenCredential, timeoutMs: number, usedFor = 'the app'): TokenCredential {
  let credential: TokenCredential | undefined;
  return {
    getToken: async (scopes, options) => {
      credential ??= built(create);
      const request = {};
      inFlight.set(request, { usedFor, sinceMs: Date.now() });
      const asked = credential;
      const timedOut = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut.abort();
          // A fresh credential for the next request: this one may stay stuck behind the request that never ended.
          if (credential === asked) credential = undefined;
          reject(
            new GatewayError(
              'UpstreamTimeout',
              `The identity endpoint did not answer a token request within ${timeoutMs} ms (TOKEN_TIMEOUT_MS); the next call asks again.`,
            ),
          );
        }, timeoutMs);
      });
      const signal = options?.abortSignal ? AbortSignal.any([options.abortSignal as AbortSignal, timedOut.signal]) : timedOut.signal;
      try {
        return await Promise.race([asked.getToken(scopes, { ...options, abortSignal: signal }), limit]);
      } finally {
        clearTimeout(timer);
        inFlight.delete(request);
      }
    },
  };
}

/** The platform's managed identity: the user-assigned one with this client id or resource id, else the system-assigned one. */
export function managedIdentityOnFirstUse(userAssigned: { clientId?: string; resourceId?: string }, timeoutMs: number, usedFor?: string): TokenCredential {
  const { clientId, resourceId } = userAssigned;
  return credentialOnFirstUse(
    (identity) => (resourceId ? new identity.ManagedIdentityCredential({ resourceId }) : new identity.ManagedIdentityCredential(clientId ? { clientId } : {})),
    timeoutMs,
    usedFor,
  );
}

/**
 * The credential, or InternalError: settings it refuses (a tenant id that is not one, say) are the
 * deployment's fault, found at the first call now that nothing builds it at start, and must not
 * read as a caller's refused token (401). The cause, logged with the failure, says which.
 */
function built(create: (identity: typeof Identity) => TokenCredential): TokenCredential {
  const identity = loadIdentity();
  try {
    return create(identity);
  } catch (error) {
    throw new GatewayError('InternalError', "The app could not build its credential from its settings; the app's log says why.", { cause: error });
  }
}

/**
 * A package that does not load is a broken deployment, not a refused token: it must surface as
 * a 500 with its stack in the log, not as the 401 a credential that finds no identity earns.
 */
function loadIdentity(): typeof Identity {
  try {
    return identityPackage();
  } catch (error) {
    throw new GatewayError('InternalError', 'The app could not load @azure/identity.', { cause: error });
  }
}
