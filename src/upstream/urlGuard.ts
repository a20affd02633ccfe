/**
 * Any URL the upstream hands back (nextLink, Location, Azure-AsyncOperation) is followed only
 * when it is on the configured origin, so a token is never sent to another host
 * (DESIGN.md section 3). Userinfo is refused too: `https://base@evil/` has another host, and
 * `https://user@base/` would send credentials of its own.
 */
import { GatewayError } from '../errors';

export function isTrustedUrl(candidate: string, trustedBase: string): boolean {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return false;
  }
  const base = new URL(trustedBase);
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol !== base.protocol || url.host !== base.host) return false;
  const basePath = base.pathname.replace(/\/+$/, '');
  return basePath === '' || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
}

export function assertTrustedUrl(candidate: string, trustedBase: string, what: string): URL {
  if (!isTrustedUrl(candidate, trustedBase)) {
    throw new GatewayError('UpstreamLinkRefused', `The upstream handed back a ${what} outside the configured upstream origin; it was not followed.`, {
      target: what,
    });
  }
  return new URL(candidate);
}
