/**
 * The optional allow-list of scopes (`ALLOWED_SCOPES`): a management call outside every
 * listed prefix is refused with 403 before anything is sent upstream. Prefixes match whole
 * segments and ignore case, as ARM resource ids do. Both sides are compared as decoded text:
 * the target path is percent-encoded for the wire, the setting is written as names read
 * (`/subscriptions/…/resourceGroups/rg-café`), and either may be in either form.
 */
import { GatewayError } from '../errors';

/** `/a/b` as decoded, NFC-normalised, lower-case segments; a malformed escape stays as written. */
function comparableSegments(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // Not a valid escape: compare the text as it is.
      }
      return decoded.normalize('NFC').toLowerCase();
    });
}

export function isScopeAllowed(targetPath: string, allowedScopes: readonly string[] | undefined): boolean {
  if (allowedScopes === undefined) return true;
  const target = comparableSegments(targetPath);
  return allowedScopes.some((scope) => {
    const prefix = comparableSegments(scope);
    return prefix.length <= target.length && prefix.every((segment, index) => segment === target[index]);
  });
}

export function assertScopeAllowed(targetPath: string, allowedScopes: readonly string[] | undefined): void {
  if (!isScopeAllowed(targetPath, allowedScopes)) {
    throw new GatewayError('ScopeNotAllowed', 'This app is not allowed to act on that scope (see ALLOWED_SCOPES).', { target: `/${targetPath}` });
  }
}
