/**
 * A credential built on its first token request, so `@azure/identity` (with MSAL, the largest
 * part of what the app could load) is loaded then and not at start (src/loading/lazyPackages.ts). A
 * package that does not load, or settings the credential refuses, are the app's failure (500),
 * never a refused token (401).
 */
import type * as Identity from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { GatewayError } from '../errors';
import { identityPackage } from '../loading/lazyPackages';

export function credentialOnFirstUse(create: (identity: typeof Identity) => TokenCredential): TokenCredential {
  let credential: TokenCredential | undefined;
  return {
    getToken: (scopes, options) => {
      credential ??= built(create);
      return credential.getToken(scopes, options);
    },
  };
}

/** The platform's managed identity: the user-assigned one with this client id or resource id, else the system-assigned one. */
export function managedIdentityOnFirstUse(userAssigned: { clientId?: string; resourceId?: string }): TokenCredential {
  const { clientId, resourceId } = userAssigned;
  return credentialOnFirstUse((identity) =>
    resourceId ? new identity.ManagedIdentityCredential({ resourceId }) : new identity.ManagedIdentityCredential(clientId ? { clientId } : {}),
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
