/**
 * Who is calling, for the access policy and the call log, built here alone whatever the way in
 * (a function key, an App Service Authentication principal, a chat platform's user): never a
 * secret, and never a name the caller chose.
 * - A function key is named by a short fingerprint of its hash (the host does not tell a Node
 *   worker the key's name), and only the key the host authenticated names the caller (see
 *   authenticatedKeyOf).
 * - A principal counts only where the platform vouches for it: with App Service Authentication
 *   on (`WEBSITE_AUTH_ENABLED=true`) the platform strips client-sent copies of
 *   `x-ms-client-principal*` and sets its own; without it anyone can send them, and they grant
 *   and name nothing.
 * - A bearer token's subject is read without verification (the upstream verifies), so it is
 *   logged apart from the caller and marked unverified, and grants nothing.
 */
import { createHash } from 'node:crypto';
import type { Caller } from '../access';
import { identifierClaim, unverifiedClaimsOf } from '../upstream';
import { bearerTokenOf } from '../upstream';
import { appParameterOf } from '../rules';

type HeaderGetter = { get(name: string): string | null };

export interface CallerIdentity extends Caller {
  /** The platform's name for the principal (only with App Service Authentication), for the log. */
  principalName?: string;
  /** The `oid`/`sub`/`appid` of a bearer token, as the token claims it: a label, not an identity. */
  unverifiedTokenSubject?: string;
}

export function keyFingerprintOf(key: string): string {
  return `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/**
 * The function key the Functions host authenticated: the first `x-functions-key` line, else
 * (with no such header) the first `code` in any case. The host hands the worker repeated
 * header lines as one value joined by commas (`"K,R"`; the local host, as Node does, `"K, R"`),
 * so the first line is what precedes the first comma. Naming the caller by the whole value
 * would let a valid key plus a second line of the caller's choosing pass for a new caller (a
 * fresh rate share, an owner and a logged name of its own). A header whose first line is
 * empty authenticates nothing, as at the host, which then reads no `code` either.
 */
export function authenticatedKeyOf(headers: HeaderGetter, query: URLSearchParams): string | undefined {
  const header = headers.get('x-functions-key');
  const key = header === null ? appParameterOf(query, 'code') : header.split(',')[0]!.trim();
  return key || undefined;
}

/** Largest `x-ms-client-principal` read, and most roles taken from it. */
const maxPrincipalHeaderLength = 16 * 1024;
const maxRoles = 100;
const objectIdClaims = ['http://schemas.microsoft.com/identity/claims/objectidentifier', 'oid'];
const roleClaims = ['roles', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'];

interface PlatformPrincipal {
  id?: string;
  name?: string;
  roles: string[];
}

/**
 * The principal App Service Authentication signed in: its object id (`x-ms-client-principal-id`,
 * or the claim), name, and app roles (the `x-ms-client-principal` header: base64 of
 * `{ claims: [{ typ, val }], role_typ }`).
 */
export function platformPrincipalOf(headers: HeaderGetter): PlatformPrincipal {
  const encoded = headers.get('x-ms-client-principal');
  let claims: { typ?: unknown; val?: unknown }[] = [];
  let roleType: unknown;
  if (encoded && encoded.length <= maxPrincipalHeaderLength) {
    try {
      const principal = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as { claims?: unknown; role_typ?: unknown };
      if (Array.isArray(principal.claims)) claims = principal.claims as typeof claims;
      roleType = principal.role_typ;
    } catch {
      // An unreadable header names nobody.
    }
  }
  const valuesOf = (types: unknown[]) =>
    claims.filter((claim) => types.includes(claim.typ) && typeof claim.val === 'string').map((claim) => claim.val as string);
  const plain = (value: string | null | undefined) => (value && /^[\w.@:/ -]{1,128}$/.test(value) ? value : undefined);
  const id = plain(headers.get('x-ms-client-principal-id')) ?? plain(valuesOf(objectIdClaims)[0]);
  const roles = valuesOf([...roleClaims, roleType])
    .map(plain)
    .filter((role): role is string => role !== undefined)
    .slice(0, maxRoles);
  return { id, name: plain(headers.get('x-ms-client-principal-name')?.slice(0, 128)), roles };
}

export function callerOf(headers: HeaderGetter, query: URLSearchParams, platformAuthEnabled: boolean): CallerIdentity {
  const claims = unverifiedClaimsOf(bearerTokenOf(headers.get('authorization') ?? undefined));
  const subject = identifierClaim(claims, 'oid') ?? identifierClaim(claims, 'sub') ?? identifierClaim(claims, 'appid');
  const key = authenticatedKeyOf(headers, query);
  const keySelector = key ? keyFingerprintOf(key) : undefined;
  const principal = platformAuthEnabled ? platformPrincipalOf(headers) : { roles: [] };
  const principalSelector = principal.id ? `principal:${principal.id.toLowerCase()}` : undefined;
  const selectors = [principalSelector, keySelector, ...principal.roles.map((role) => `role:${role}`)].filter(
    (selector): selector is string => selector !== undefined,
  );
  return {
    primary: principalSelector ?? keySelector ?? 'anonymous',
    selectors,
    ...(principal.name === undefined ? {} : { principalName: principal.name }),
    ...(subject === undefined ? {} : { unverifiedTokenSubject: subject }),
  };
}

/**
 * A chat platform's user as the app names it: `<platform>:<the platform's own ids of them>`
 * (`slack:<team>/<user>`, `teams:<tenant>/<AAD object id>`), the name ACCESS_POLICY rules give.
 * The platform's signature vouches for it; only the platform's route builds one.
 */
export function chatCallerOf(platform: string, user: string): CallerIdentity {
  const name = `${platform}:${user}`;
  return { primary: name, selectors: [name] };
}

/** The caller as the call log names it: its most specific name, never a secret. */
export function callerLogFields(identity: CallerIdentity): { caller: string; principalName?: string; unverifiedTokenSubject?: string } {
  return {
    caller: identity.primary,
    ...(identity.principalName === undefined ? {} : { principalName: identity.principalName }),
    ...(identity.unverifiedTokenSubject === undefined ? {} : { unverifiedTokenSubject: identity.unverifiedTokenSubject }),
  };
}
