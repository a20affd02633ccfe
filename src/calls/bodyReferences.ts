/**
 * The resources a request body names besides its target: an identity to attach
 * (`identity.userAssignedIdentities`, keyed by resource id), a subnet to join, a workspace to
 * write to. The upstream acts with the app's own identity in `managed` mode, so a body naming a
 * resource outside the caller's scopes would reach past them: every string value and object key
 * that names a resource under `subscriptions/<id>` is held to the same scopes as the target,
 * however it is spelled (leading blanks or slashes, none, backslashes, percent-encoded, a whole
 * URL with its origin and query), and one with `.` or `..` segments is refused outright.
 */
import { GatewayError } from '../errors';
import { isScopeAllowed, ordinalUpper } from '../rules';

/** The text decoded once, as far as it decodes; a malformed escape stays as written. */
function decodedOnce(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const isDotSegment = (segment: string) => segment === '.' || segment === '..' || ['.', '..'].includes(decodedOnce(segment));

/**
 * What a string names, read as loosely as any reader of it might: its path from the first
 * `subscriptions` segment (compared as ARM compares names) that has one after it, without a
 * query or fragment, and whether any segment is a dot segment. Undefined for a string that
 * names nothing under a subscription.
 */
export function referenceIn(text: string): { path: string; dotSegments: boolean } | undefined {
  const decoded = text.includes('%') ? decodedOnce(text) : text;
  // Only text holding the word can name one: the rest (nearly every value) costs one search.
  if (!decoded.toUpperCase().includes('SUBSCRIPTIONS')) return undefined;
  const segments = decoded
    .split(/[/\\]/)
    .map((segment) => segment.trim())
    .filter((segment) => segment !== '');
  const start = segments.findIndex((segment, index) => ordinalUpper(segment) === 'SUBSCRIPTIONS' && index < segments.length - 1);
  if (start < 0) return undefined;
  const path = `/${segments.slice(start).join('/')}`;
  // A URL's query and fragment are not its path; cut there unless that leaves no subscription.
  const withoutQuery = path.split(/[?#]/, 1)[0]!;
  return { path: /^\/[^/]+\/[^/]/.test(withoutQuery) ? withoutQuery : path, dotSegments: segments.some(isDotSegment) };
}

/** Each resource named in `value` with where it is (a JSON path); walks at most the body's own depth (64). */
function* referencesIn(value: unknown, at: string): Generator<{ reference: NonNullable<ReturnType<typeof referenceIn>>; at: string }> {
  if (typeof value === 'string') {
    const reference = referenceIn(value);
    if (reference) yield { reference, at };
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* referencesIn(item, `${at}[${index}]`);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const path = at ? `${at}.${key}` : key;
      const reference = referenceIn(key);
      if (reference) yield { reference, at: path };
      yield* referencesIn(item, path);
    }
  }
}

/**
 * Refuses a body naming a resource outside ALLOWED_SCOPES or the caller's scopes (403
 * `ScopeNotAllowed`), or naming one with dot segments, which a reader may resolve elsewhere
 * (400 `InvalidRequestBody`).
 */
export function assertBodyWithinScopes(body: unknown, allowedScopes: readonly string[] | undefined, callerScopes: readonly string[] | undefined): void {
  if (allowedScopes === undefined && callerScopes === undefined) return;
  for (const { reference, at } of referencesIn(body, '')) {
    if (reference.dotSegments) {
      throw new GatewayError('InvalidRequestBody', `The request body names a resource with a "." or ".." segment, which this app does not resolve: ${at}.`, {
        target: at,
      });
    }
    if (!isScopeAllowed(reference.path, allowedScopes)) {
      throw new GatewayError('ScopeNotAllowed', `The request body names a resource outside the scopes this app may act on (see ALLOWED_SCOPES): ${at}.`, {
        target: at,
      });
    }
    if (!isScopeAllowed(reference.path, callerScopes)) {
      throw new GatewayError('ScopeNotAllowed', `The request body names a resource outside the caller's scopes (see ACCESS_POLICY): ${at}.`, { target: at });
    }
  }
}
