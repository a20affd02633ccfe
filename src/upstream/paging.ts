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
  const link = assertTrustedUrl(nextLink, upstreamBase, 'nextLink');
  const basePath = new URL(upstreamBase).pathname.replace(/\/+$/, '');
  const relativePath = link.pathname.slice(basePath.length);
  return `${appBase.replace(/\/+$/, '')}${relativePath}${link.search}`;
}

/**
 * Follows `nextLink` from the first page until there is none or `maxPages` pages are read,
 * and merges every `value` into the first page's shape. The merged page keeps `nextLink` only
 * when the limit stopped it, so the caller can tell the list is not complete.
 */
export async function collectPages(
  firstPage: ListPage,
  fetchPage: (nextLink: string) => Promise<ListPage>,
  maxPages: number,
): Promise<ListPage> {
  const value = [...firstPage.value];
  let nextLink = firstPage.nextLink ?? undefined;
  let pagesRead = 1;
  while (nextLink && pagesRead < maxPages) {
    const page = await fetchPage(nextLink);
    if (!isListPage(page)) {
      throw new GatewayError('UpstreamBadResponse', `Page ${pagesRead + 1} of the list has no "value" array.`);
    }
    for (const item of page.value) value.push(item);
    nextLink = page.nextLink ?? undefined;
    pagesRead += 1;
  }
  const { nextLink: _ignored, ...rest } = firstPage;
  return nextLink ? { ...rest, value, nextLink } : { ...rest, value };
}
