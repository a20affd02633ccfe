/**
 * The app's base URL (`http://host/api`) as the caller reached it, for links the app hands
 * out (`nextLink`, `Location`, status links). The request path ends with the function's own
 * filled route; whatever precedes it is the host's route prefix.
 */
export function appBaseOf(requestUrl: string, ownPath: string): string {
  const url = new URL(requestUrl);
  const suffix = `/${ownPath.replace(/^\/+/, '')}`.toLowerCase();
  const prefix = url.pathname.toLowerCase().endsWith(suffix) ? url.pathname.slice(0, url.pathname.length - suffix.length) : '/api';
  return `${url.origin}${prefix}`;
}
