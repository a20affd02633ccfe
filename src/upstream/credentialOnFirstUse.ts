/**
 * A credential built on its first token request, so `@azure/identity` (with MSAL, the largest
 * part of what the app could load) is loaded then and not at start (src/lazyPackages.ts).
 */
import type * as Identity from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { GatewayError } from '../errors';
import { identityPackage } from '../lazyPackages';

export function credentialOnFirstUse(create: (identity: typeof Identity) => TokenCredential): TokenCredential {
  let credential: TokenCredential | undefined;
  return {
    getToken: (scopes, options) => {
      credential ??= create(loadIdentity());
      return credential.getToken(scopes, options);
    },
  };
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
