/**
 * The query of a request as the caller sent it. The Functions host hands the worker the query
 * as a map (a repeated name merged or dropped), but the URL it passes keeps every pair, so the
 * app reads the URL: a repeated documented parameter can then be refused, not silently merged.
 */
import type { HttpRequest } from '@azure/functions';

export function rawQueryOf(request: Pick<HttpRequest, 'url'>): URLSearchParams {
  return new URL(request.url).searchParams;
}
