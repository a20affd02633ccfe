/**
 * Any URL the upstream hands back (nextLink, Location, Azure-AsyncOperation) is followed only
 * when it is on the configured origin, so a token is never sent to another host.
 * Userinfo is refused too: `https://base@evil/` has another host, and
 * `https://user@base/` would send credentials of its own.
 */
import { GatewayError } from '../errors';

/** `candidate` parsed, when it is on `trustedBase`; undefined when it is not (or is no URL). */
export function trustedUrlOf(candidate: string, trustedBase: URL): URL | undefined {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  if (url.protocol !== trustedBase.protocol || url.host !== trustedBase.host) return undefined;
  const basePath = trustedBase.pathname.replace(/\/+$/, '');
  return basePath === '' || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`) ? url : undefined;
}

export function isTrustedUrl(candidate: string, trustedBase: string): boolean {
  return trustedUrlOf(candidate, new URL(trustedBase)) !== undefined;
}

export function assertTrustedUrl(candidate: string, trustedBase: string | URL, what: string): URL {
  const url = trustedUrlOf(candidate, typeof trustedBase === 'string' ? new URL(trustedBase) : trustedBase);
  if (!url) {
    throw new GatewayError('UpstreamLinkRefused', `The upstream handed back a ${what} outside the configured upstream origin; it was not followed.`, {
      target: what,
    });
  }
  return url;
}
