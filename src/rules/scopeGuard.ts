/**
 * The optional allow-list of scopes (`ALLOWED_SCOPES`): a management call outside every
 * listed prefix is refused with 403 before anything is sent upstream. Prefixes match whole
 * segments and ignore case, as ARM resource ids do. Both sides are compared as decoded text:
 * the target path is percent-encoded for the wire, the setting is written as names read
 * (`/subscriptions/…/resourceGroups/rg-café`), and either may be in either form.
 */
import { GatewayError } from '../errors';

/**
 * A name as ARM compares names (.NET's ordinal ignore-case: each code point upper-cased on its
 * own, nothing normalised). JavaScript's lower-casing maps U+212A KELVIN SIGN to `k` and NFC
 * makes two spellings one, so either would let a lookalike name pass for a granted one while
 * ARM reads it as another resource group.
 */
export function ordinalUpper(name: string): string {
  let folded = '';
  for (const char of name) {
    const upper = char.toUpperCase();
    folded += [...upper].length === 1 ? upper : char;
  }
  return folded;
}

/** `/a/b` as decoded segments compared as ARM compares them; a malformed escape stays as written. */
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
      return ordinalUpper(decoded);
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
