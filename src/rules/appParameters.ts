/**
 * The query parameters that belong to the app or the Functions host, never to the upstream:
 * `code` (the function key), `gateway-pages` and `gateway-wait`. Their names are matched ignoring
 * case, as the host matches `code`, so `?Code=` is read (and never forwarded) like `?code=`.
 */

/**
 * Query parameters that belong to the app or the Functions host and are never forwarded,
 * matched ignoring case (the host reads `code` so).
 */
export const appQueryParameters = ['code', 'gateway-pages', 'gateway-wait'] as const;

export function isAppQueryParameter(name: string): boolean {
  return (appQueryParameters as readonly string[]).includes(name.toLowerCase());
}

/**
 * The value of an app-only parameter, whose name is matched ignoring case as the host matches
 * `code`: `?Code=` must be read (and never forwarded) like `?code=`.
 */
export function appParameterOf(query: URLSearchParams, name: string): string | null {
  for (const [candidate, value] of query) if (candidate.toLowerCase() === name) return value;
  return null;
}
