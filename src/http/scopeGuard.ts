/**
 * The optional allow-list of scopes (`ALLOWED_SCOPES`): a management call outside every
 * listed prefix is refused with 403 before anything is sent upstream. Prefixes match whole
 * segments and ignore case, as ARM resource ids do.
 */
import { GatewayError } from '../errors';

export function isScopeAllowed(targetPath: string, allowedScopes: readonly string[] | undefined): boolean {
  if (allowedScopes === undefined) return true;
  const target = `/${targetPath.replace(/^\/+/, '')}`.toLowerCase();
  return allowedScopes.some((scope) => {
    const prefix = scope.replace(/\/+$/, '').toLowerCase();
    return target === prefix || target.startsWith(`${prefix}/`);
  });
}

export function assertScopeAllowed(targetPath: string, allowedScopes: readonly string[] | undefined): void {
  if (!isScopeAllowed(targetPath, allowedScopes)) {
    throw new GatewayError('ScopeNotAllowed', 'This app is not allowed to act on that scope (see ALLOWED_SCOPES).', { target: `/${targetPath}` });
  }
}
