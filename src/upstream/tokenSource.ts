/**
 * Where the bearer token for an upstream call comes from (`UPSTREAM_AUTH`).
 * A token is only ever handed to the client together with the upstream it is meant for; the
 * client attaches it to URLs on that upstream's origin alone.
 */
import { createHash } from 'node:crypto';
import type { AccessToken, TokenCredential } from '@azure/identity';
import { GatewayError } from '../errors';
import type { UpstreamName } from '../spec';
import { identifierClaim, unverifiedClaimsOf } from './tokenClaims';

export type { UpstreamName } from '../spec';

export interface TokenRequest {
  upstream: UpstreamName;
  /** The caller's `Authorization` header, used in passthrough mode. */
  callerAuthorization?: string;
}

export interface TokenSource {
  readonly mode: 'managed' | 'passthrough' | 'static';
  getToken(request: TokenRequest): Promise<string>;
}

export function staticTokenSource(token: string): TokenSource {
  return { mode: 'static', getToken: async () => token };
}

export function bearerTokenOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * Who acts upstream with a caller's token, as a digest that cannot be turned back into it: the
 * principal the token names (tenant `tid` and object `oid`), so the same principal's refreshed
 * token (every hour; a migration runs up to four) is the same actor; for a token without those
 * claims (opaque, not a JWT), the token itself. The claims are not verified here, and need not
 * be: an actor only decides whose reads may drive polls, and every poll is made with the
 * reader's own token, which the upstream verifies.
 */
export function actorOf(token: string): string {
  const claims = unverifiedClaimsOf(token);
  const tenant = identifierClaim(claims, 'tid');
  const object = identifierClaim(claims, 'oid');
  const identity = tenant && object ? `principal:${tenant}/${object}` : `token:${token}`;
  return createHash('sha256').update(identity).digest('hex');
}

export function passthroughTokenSource(): TokenSource {
  return {
    mode: 'passthrough',
    getToken: async ({ callerAuthorization }) => {
      const token = bearerTokenOf(callerAuthorization);
      if (!token) {
        throw new GatewayError('MissingBearerToken', 'This app forwards the caller\'s token: send "Authorization: Bearer <token>" for the upstream.', {
          target: 'Authorization',
        });
      }
      return token;
    },
  };
}

/** Refresh a cached token this long before it expires. */
const refreshMarginMs = 5 * 60_000;

/**
 * Tokens from `@azure/identity` credentials, one scope per upstream, cached until near expiry
 * so concurrent calls share one token request.
 */
export function credentialTokenSource(
  credentials: Record<UpstreamName, TokenCredential>,
  scopes: Record<UpstreamName, string>,
  now: () => number = Date.now,
): TokenSource {
  const cache = new Map<UpstreamName, Promise<AccessToken>>();
  const fetchToken = async (upstream: UpstreamName): Promise<AccessToken> => {
    const token = await credentials[upstream].getToken(scopes[upstream]);
    if (!token) throw new GatewayError('Unauthorized', `No token could be obtained for the ${upstream} upstream.`);
    return token;
  };
  return {
    mode: 'managed',
    getToken: async ({ upstream }) => {
      let pending = cache.get(upstream);
      if (pending) {
        const cached = await pending.catch(() => undefined);
        if (!cached || cached.expiresOnTimestamp - refreshMarginMs <= now()) pending = undefined;
      }
      if (!pending) {
        pending = fetchToken(upstream);
        cache.set(upstream, pending);
        pending.catch(() => cache.delete(upstream));
      }
      try {
        return (await pending).token;
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        throw new GatewayError('Unauthorized', `No token could be obtained for the ${upstream} upstream.`, { cause: error });
      }
    },
  };
}
