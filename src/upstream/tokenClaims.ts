/**
 * The claims of a bearer token, read WITHOUT verifying its signature. The upstream verifies
 * tokens; the app reads claims only as labels (who an orchestration belongs to, who called),
 * and anything built on them must say it is unverified or must not grant anything by itself.
 */

/** Largest token read: real access tokens are a few KB; a larger header is not worth decoding. */
const maxTokenLength = 16 * 1024;

/** The payload of a JWT-shaped token, or undefined for an opaque or malformed one. */
export function unverifiedClaimsOf(token: string | undefined): Record<string, unknown> | undefined {
  if (!token || token.length > maxTokenLength) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A claim that is a short, plain identifier (safe to log or key on), else undefined. */
export function identifierClaim(claims: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = claims?.[name];
  return typeof value === 'string' && /^[\w.@-]{1,128}$/.test(value) ? value : undefined;
}
