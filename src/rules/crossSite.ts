/**
 * Whether a request comes from a page of another origin, by the headers browsers set and a page
 * cannot: `Sec-Fetch-Site` (`cross-site`, or `same-site` from a sibling origin) and `Origin` (a
 * page's origin, on every cross-origin request and on a same-origin one that is not a GET).
 * Scripts and SDKs send neither, and go on. A state-changing request from another origin is
 * refused: a page a caller is lured to could otherwise use the caller's browser session (App
 * Service Authentication's cookie) with a function key the page knows, and approve a start or
 * terminate orchestrations in the caller's name.
 */
import type { HeaderGetter } from './correlation';

/** Methods that change nothing: a page of any origin may send them (the answers are not its to read). */
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why `method` with `headers` comes from another origin than `ownOrigins` (the address the
 * request came to, and APP_PUBLIC_URL's when set), or undefined when it does not or changes
 * nothing. The reason names the header, never its value.
 */
export function crossSiteReasonOf(method: string, headers: HeaderGetter, ownOrigins: readonly string[]): string | undefined {
  if (safeMethods.has(method.toUpperCase())) return undefined;
  const site = headers.get('sec-fetch-site')?.trim().toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return `Sec-Fetch-Site: ${site}`;
  const origin = headers.get('origin')?.trim();
  if (origin !== undefined && origin !== '' && !ownOrigins.includes(origin.toLowerCase())) return 'an Origin other than the app';
  return undefined;
}
