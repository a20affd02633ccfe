/**
 * Paging rules: a `nextLink` is followed, or handed to the caller, only
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

/** How much one merge may hold: the first bound reached ends it. */
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

/** The first page of a list, which a merge always answers, and how a merge reads each later one. */
type FirstPage = FetchedPage & { page: ListPage };
type FetchPage = (nextLink: string) => Promise<FetchedPage>;

export interface MergedPages {
  page: ListPage;
  /** Which bound ended the merge early, if one did; the page then keeps a `nextLink`. */
  stoppedBy?: 'pages' | 'items' | 'bytes' | 'time' | 'rate';
}

/** A merge as the answer's JSON, with its items already written out (see collectPagesText). */
export interface MergedText {
  /**
   * The first page with the `nextLink` where a bound ended the merge (none when the list was read
   * to its end); its `value` only marks where the merged items go (listPageText).
   */
  page: ListPage;
  /** The JSON of every merged item, comma-separated, without the brackets. */
  itemsText: string;
  stoppedBy?: MergedPages['stoppedBy'];
}

/** Until the check phase: undici writes a request on a kept-alive socket only then. */
const afterPendingWrites = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Follows `nextLink` from the first page, handing each page's items to `take`, until the list
 * ends or a bound of `limits` is reached. A page that would take the merge past the item or byte
 * bound is left for the caller: the merge then stops at the `nextLink` that reads it, so the
 * caller can go on from there and the merge never holds more than its bounds (beyond a first
 * page, which is always answered). A later page that times out ends the merge the same way.
 * Each page is handed on once the request for the next one is out, so `take` works while the
 * upstream does.
 */
async function followPages(
  first: FirstPage,
  fetchPage: FetchPage,
  limits: MergeLimits,
  take: (items: unknown[]) => void,
  now: () => number,
): Promise<{ nextLink?: string; stoppedBy?: MergedPages['stoppedBy'] }> {
  let items = first.page.value.length;
  let bytes = first.bytes;
  let nextLink = first.page.nextLink ?? undefined;
  let pagesRead = 1;
  let untaken: unknown[] | undefined = first.page.value;
  let stoppedBy: MergedPages['stoppedBy'];
  while (nextLink) {
    if (pagesRead >= limits.maxPages) stoppedBy = 'pages';
    else if (now() >= limits.deadlineAt) stoppedBy = 'time';
    if (stoppedBy) break;
    const fetching = fetchPage(nextLink);
    // Awaited below; this only keeps a failure from counting as unhandled in the meantime.
    fetching.catch(() => undefined);
    await afterPendingWrites();
    take(untaken!);
    untaken = undefined;
    let fetched: FetchedPage;
    try {
      fetched = await fetching;
    } catch (error) {
      // Out of time, or out of the caller's share of upstream reads: the merged part is answered.
      if (error instanceof GatewayError && (error.code === 'UpstreamTimeout' || error.code === 'CallerRateLimited')) {
        stoppedBy = error.code === 'UpstreamTimeout' ? 'time' : 'rate';
        break;
      }
      throw error;
    }
    const { page } = fetched;
    if (!isListPage(page)) {
      throw new GatewayError('UpstreamBadResponse', `Page ${pagesRead + 1} of the list has no "value" array.`);
    }
    if (items + page.value.length > limits.maxItems) stoppedBy = 'items';
    else if (bytes + fetched.bytes > limits.maxBytes) stoppedBy = 'bytes';
    if (stoppedBy) break;
    untaken = page.value;
    items += page.value.length;
    bytes += fetched.bytes;
    nextLink = page.nextLink ?? undefined;
    pagesRead += 1;
  }
  if (untaken) take(untaken);
  return { nextLink, stoppedBy };
}

/** Merges every page's `value` into the first page's shape, as followPages reads them. */
export async function collectPages(first: FirstPage, fetchPage: FetchPage, limits: MergeLimits, now: () => number = Date.now): Promise<MergedPages> {
  const value: unknown[] = [];
  const take = (items: unknown[]) => {
    for (const item of items) value.push(item);
  };
  const { nextLink, stoppedBy } = await followPages(first, fetchPage, limits, take, now);
  const { nextLink: _ignored, ...rest } = first.page;
  return nextLink ? { page: { ...rest, value, nextLink }, stoppedBy } : { page: { ...rest, value } };
}

/**
 * The same merge for an answer: each page's items are written out as JSON while the request for
 * the next page is out, and are not held as objects after that, so a merge of 10,000 items is
 * neither serialised again at the end nor kept alive until then.
 */
export async function collectPagesText(first: FirstPage, fetchPage: FetchPage, limits: MergeLimits, now: () => number = Date.now): Promise<MergedText> {
  const pieces: string[] = [];
  const take = (items: unknown[]) => {
    if (items.length > 0) pieces.push(JSON.stringify(items).slice(1, -1));
  };
  const { nextLink, stoppedBy } = await followPages(first, fetchPage, limits, take, now);
  const { nextLink: _ignored, ...rest } = first.page;
  return { page: nextLink ? { ...rest, nextLink } : rest, itemsText: pieces.join(','), stoppedBy };
}

/**
 * The JSON of a merged page: its fields in their order, `value` holding `itemsText`. For fields
 * read from JSON this is what JSON.stringify writes for the page with its items in `value`.
 */
export function listPageText(page: ListPage, itemsText: string): string {
  const members = Object.keys(page).map((name) => `${JSON.stringify(name)}:${name === 'value' ? `[${itemsText}]` : JSON.stringify(page[name])}`);
  return `{${members.join(',')}}`;
}
