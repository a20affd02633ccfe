/**
 * The one rule for the app's base URL (`https://host/api`), on which every link the app hands
 * out is built: `nextLink`, `Location`, `Link`, and the status, terminate and operation URLs.
 *
 * `APP_PUBLIC_URL`, when set, is the base: behind a custom domain, Front Door or an Application
 * Gateway the host sees its own name, not the one callers use, and status links on the wrong
 * host are the most reported Durable Functions complaint. Otherwise the base is the request URL
 * as the host presents it (the scheme and host the request arrived on). Forwarded headers
 * (`X-Forwarded-Host`, `X-Forwarded-Proto`, `Forwarded`) are never read: any caller can send
 * them, and only the deployment knows which proxy in front of it to believe; it says so with
 * `APP_PUBLIC_URL`.
 */
export function appBaseOf(requestUrl: string | URL, ownPath: string, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const url = typeof requestUrl === 'string' ? new URL(requestUrl) : requestUrl;
  // The request path ends with the function's own filled route; what precedes it is the
  // host's route prefix.
  const suffix = `/${ownPath.replace(/^\/+/, '')}`.toLowerCase();
  const prefix = url.pathname.toLowerCase().endsWith(suffix) ? url.pathname.slice(0, url.pathname.length - suffix.length) : '/api';
  return `${url.origin}${prefix}`;
}
