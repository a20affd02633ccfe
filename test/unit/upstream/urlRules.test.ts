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
  const fetchPage = async (link: string) => ({ page: pages[link]!, bytes: 10 });
  const unbounded = { maxPages: 10, maxItems: 1000, maxBytes: 1000, deadlineAt: Infinity };

  it('merges every page into one value array', async () => {
    const merged = await collectPages({ page: { value: [1, 2], nextLink: 'one', extra: 'kept' }, bytes: 10 }, fetchPage, unbounded);
    expect(merged).toEqual({ page: { value: [1, 2, 3, 4, 5], extra: 'kept' } });
  });

  it('stops at the page limit and keeps the nextLink so the list reads as unfinished', async () => {
    const merged = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 10 }, fetchPage, { ...unbounded, maxPages: 2 });
    expect(merged).toEqual({ page: { value: [1, 2, 3, 4], nextLink: 'two' }, stoppedBy: 'pages' });
  });

  it('leaves a page that would pass the item bound for the caller, with the link that reads it', async () => {
    const merged = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 10 }, fetchPage, { ...unbounded, maxItems: 4 });
    expect(merged).toEqual({ page: { value: [1, 2, 3, 4], nextLink: 'two' }, stoppedBy: 'items' });
    const tight = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 10 }, fetchPage, { ...unbounded, maxItems: 3 });
    expect(tight).toEqual({ page: { value: [1, 2], nextLink: 'one' }, stoppedBy: 'items' });
  });

  it('stops before the byte bound, always answering the first page', async () => {
    const merged = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 10 }, fetchPage, { ...unbounded, maxBytes: 25 });
    expect(merged).toEqual({ page: { value: [1, 2, 3, 4], nextLink: 'two' }, stoppedBy: 'bytes' });
    const huge = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 5000 }, fetchPage, { ...unbounded, maxBytes: 25 });
    expect(huge).toEqual({ page: { value: [1, 2], nextLink: 'one' }, stoppedBy: 'bytes' });
  });

  it('stops at the deadline, and when a later page times out', async () => {
    let clock = 0;
    const slow = async (link: string) => {
      clock += 100;
      return fetchPage(link);
    };
    const merged = await collectPages({ page: { value: [1, 2], nextLink: 'one' }, bytes: 10 }, slow, { ...unbounded, deadlineAt: 100 }, () => clock);
    expect(merged).toEqual({ page: { value: [1, 2, 3, 4], nextLink: 'two' }, stoppedBy: 'time' });
    const timingOut = async () => {
      throw new GatewayError('UpstreamTimeout', 'slow');
    };
    expect(await collectPages({ page: { value: [1], nextLink: 'one' }, bytes: 10 }, timingOut, unbounded)).toEqual({
      page: { value: [1], nextLink: 'one' },
      stoppedBy: 'time',
    });
  });

  it('refuses a page without a value array', async () => {
    await expect(collectPages({ page: { value: [], nextLink: 'x' }, bytes: 1 }, async () => ({ page: {}, bytes: 1 }), unbounded)).rejects.toMatchObject({
      code: 'UpstreamBadResponse',
    });
  });
});
