/**
 * Paging rules (DESIGN.md section 3): a `nextLink` is followed, or handed to the caller, only
 * when it is on the upstream's origin; handed to the caller, it points back at the app.
 */
import { GatewayError } from '../errors';
import { assertTrustedUrl } from './urlGuard';

export interface ListPage {
  value: unknown[];
  nextLink?: string | null;
  [field: string]: unknown;
}

export function isListPage(body: unknown): body is ListPage {
  return typeof body === 'object' && body !== null && Array.isArray((body as ListPage).value);
}

/** Maps an upstream `nextLink` to the same path and query under the app's base (`…/api`). */
export function rewriteNextLink(nextLink: string, upstreamBase: string, appBase: string): string {
  const base = new URL(upstreamBase);
  const link = assertTrustedUrl(nextLink, base, 'nextLink');
  const basePath = base.pathname.replace(/\/+$/, '');
  const relativePath = link.pathname.slice(basePath.length);
  return `${appBase.replace(/\/+$/, '')}${relativePath}${link.search}`;
}

/** How much one merge may hold: the first bound reached ends it (DESIGN.md section 3). */
export interface MergeLimits {
  maxPages: number;
  maxItems: number;
  /** Bytes of page bodies as the upstream sent them. */
  maxBytes: number;
  /** When to stop following links (ms since the epoch), so a slow upstream cannot hold a caller. */
  deadlineAt: number;
}

export interface FetchedPage {
  page: unknown;
  /** Size of the body the page came in. */
  bytes: number;
}

export interface MergedPages {
  page: ListPage;
  /** Which bound ended the merge early, if one did; the page then keeps a `nextLink`. */
  stoppedBy?: 'pages' | 'items' | 'bytes' | 'time';
}

/**
 * Follows `nextLink` from the first page and merges every `value` into the first page's shape,
 * until the list ends or a bound of `limits` is reached. A page that would take the merge past
 * the item or byte bound is left for the caller: the merged page then keeps the `nextLink` that
 * reads it, so the caller can go on from there and the merge never holds more than its bounds
 * (beyond a first page, which is always answered). A later page that times out ends the merge
 * the same way.
 */
export async function collectPages(
  first: FetchedPage & { page: ListPage },
  fetchPage: (nextLink: string) => Promise<FetchedPage>,
  limits: MergeLimits,
  now: () => number = Date.now,
): Promise<MergedPages> {
  const value = [...first.page.value];
  let bytes = first.bytes;
  let nextLink = first.page.nextLink ?? undefined;
  let pagesRead = 1;
  let stoppedBy: MergedPages['stoppedBy'];
  while (nextLink) {
    if (pagesRead >= limits.maxPages) stoppedBy = 'pages';
    else if (now() >= limits.deadlineAt) stoppedBy = 'time';
    if (stoppedBy) break;
    let fetched: FetchedPage;
    try {
      fetched = await fetchPage(nextLink);
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UpstreamTimeout') {
        stoppedBy = 'time';
        break;
      }
      throw error;
    }
    const { page } = fetched;
    if (!isListPage(page)) {
      throw new GatewayError('UpstreamBadResponse', `Page ${pagesRead + 1} of the list has no "value" array.`);
    }
    if (value.length + page.value.length > limits.maxItems) stoppedBy = 'items';
    else if (bytes + fetched.bytes > limits.maxBytes) stoppedBy = 'bytes';
    if (stoppedBy) break;
    for (const item of page.value) value.push(item);
    bytes += fetched.bytes;
    nextLink = page.nextLink ?? undefined;
    pagesRead += 1;
  }
  const { nextLink: _ignored, ...rest } = first.page;
  return nextLink ? { page: { ...rest, value, nextLink }, stoppedBy } : { page: { ...rest, value } };
}
