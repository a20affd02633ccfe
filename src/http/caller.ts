/**
 * Who is calling, for the call log: never a secret. A function key is named by a short
 * fingerprint of its hash; a bearer token by its subject claim, read without verification
 * (verification is the upstream's job, this is only a label).
 */
import { createHash } from 'node:crypto';
import { identifierClaim, unverifiedClaimsOf } from '../upstream/tokenClaims';
import { bearerTokenOf } from '../upstream/tokenSource';

type HeaderGetter = { get(name: string): string | null };

export function callerOf(headers: HeaderGetter, query: URLSearchParams): string {
  const principal = headers.get('x-ms-client-principal-name');
  if (principal) return `principal:${principal.slice(0, 128)}`;
  const subject = tokenSubject(bearerTokenOf(headers.get('authorization') ?? undefined));
  if (subject) return `token:${subject}`;
  const key = headers.get('x-functions-key') ?? query.get('code');
  if (key) return `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
  return 'anonymous';
}

function tokenSubject(token: string | undefined): string | undefined {
  const claims = unverifiedClaimsOf(token);
  return identifierClaim(claims, 'oid') ?? identifierClaim(claims, 'sub') ?? identifierClaim(claims, 'appid');
}
