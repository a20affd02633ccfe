/** Which URLs handed back by the upstream may be followed with a token, and paging. */
import { GatewayError } from '../../../src/errors';
import { collectPages, rewriteNextLink } from '../../../src/upstream/paging';
import { isTrustedUrl } from '../../../src/upstream/urlGuard';

const base = 'https://management.example.com';

describe('isTrustedUrl', () => {
  it.each<[string, boolean]>([
    ['https://management.example.com/subscriptions/x?$skipToken=2', true],
    ['https://MANAGEMENT.example.com/subscriptions/x', true],
    ['http://management.example.com/subscriptions/x', false],
    ['https://management.example.com:8443/subscriptions/x', false],
    ['https://evil.example.com/subscriptions/x', false],
    ['https://management.example.com.evil.com/x', false],
    ['https://management.example.com@evil.com/x', false],
    ['https://user:pass@management.example.com/x', false],
    ['//evil.com/x', false],
    ['/subscriptions/x', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('%s → %s', (candidate, expected) => {
    expect(isTrustedUrl(candidate, base)).toBe(expected);
  });

  it('keeps to the base path when the base has one', () => {
    expect(isTrustedUrl('https://h.example/arm/subscriptions/x', 'https://h.example/arm')).toBe(true);
    expect(isTrustedUrl('https://h.example/other/subscriptions/x', 'https://h.example/arm')).toBe(false);
    expect(isTrustedUrl('https://h.example/armory', 'https://h.example/arm')).toBe(false);
  });
});

describe('rewriteNextLink', () => {
  it('points the next page at the app, keeping path and query', () => {
    expect(rewriteNextLink(`${base}/subscriptions/s/usages?api-version=1&%24skipToken=abc`, base, 'http://127.0.0.1:7071/api')).toBe(
      'http://127.0.0.1:7071/api/subscriptions/s/usages?api-version=1&%24skipToken=abc',
    );
  });

  it('refuses a nextLink on another host', () => {
    expect(() => rewriteNextLink('https://evil.example.com/x', base, 'http://app/api')).toThrow(GatewayError);
  });
});

describe('collectPages', () => {
  const pages: Record<string, { value: number[]; nextLink?: string }> = {
    one: { value: [3, 4], nextLink: 'two' },
    two: { value: [5] },
  };

  it('merges every page into one value array', async () => {
    const merged = await collectPages({ value: [1, 2], nextLink: 'one', extra: 'kept' }, async (link) => pages[link]!, 10);
    expect(merged).toEqual({ value: [1, 2, 3, 4, 5], extra: 'kept' });
  });

  it('stops at the page limit and keeps the nextLink so the list reads as unfinished', async () => {
    const merged = await collectPages({ value: [1, 2], nextLink: 'one' }, async (link) => pages[link]!, 2);
    expect(merged).toEqual({ value: [1, 2, 3, 4], nextLink: 'two' });
  });

  it('refuses a page without a value array', async () => {
    await expect(collectPages({ value: [], nextLink: 'x' }, async () => ({}) as never, 5)).rejects.toMatchObject({ code: 'UpstreamBadResponse' });
  });
});
