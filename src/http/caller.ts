/**
 * Who is calling, for the call log: never a secret, and never a name the caller chose.
 * - A principal header counts only where the platform sets it: with App Service
 *   Authentication on (`WEBSITE_AUTH_ENABLED=true`) the platform strips client-sent copies of
 *   `x-ms-client-principal-*`; without it anyone can send them.
 * - A function key is named by a short fingerprint of its hash (the host does not tell a Node
 *   worker the key's name).
 * - A bearer token's subject is read without verification (the upstream verifies), so it is
 *   logged apart from the caller and marked unverified.
 */
import { createHash } from 'node:crypto';
import { identifierClaim, unverifiedClaimsOf } from '../upstream/tokenClaims';
import { bearerTokenOf } from '../upstream/tokenSource';
import { appParameterOf } from './requestQuery';

type HeaderGetter = { get(name: string): string | null };

export interface CallerIdentity {
  caller: string;
  /** The `oid`/`sub`/`appid` of a bearer token, as the token claims it: a label, not an identity. */
  unverifiedTokenSubject?: string;
}

export function keyFingerprintOf(key: string): string {
  return `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

export function callerOf(headers: HeaderGetter, query: URLSearchParams, platformAuthEnabled: boolean): CallerIdentity {
  const claims = unverifiedClaimsOf(bearerTokenOf(headers.get('authorization') ?? undefined));
  const subject = identifierClaim(claims, 'oid') ?? identifierClaim(claims, 'sub') ?? identifierClaim(claims, 'appid');
  const labels = subject === undefined ? {} : { unverifiedTokenSubject: subject };
  const principal = platformAuthEnabled ? headers.get('x-ms-client-principal-name') : null;
  if (principal) return { caller: `principal:${principal.slice(0, 128)}`, ...labels };
  const key = headers.get('x-functions-key') ?? appParameterOf(query, 'code');
  if (key) return { caller: keyFingerprintOf(key), ...labels };
  return { caller: 'anonymous', ...labels };
}
