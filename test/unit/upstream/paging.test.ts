/**
 * The merge written as JSON text (collectPagesText, listPageText): the same answer, bounds and
 * stops as the merge into objects (collectPages, whose rules urlRules.test.ts tables), with the
 * same bytes JSON.stringify would write.
 */
import fc from 'fast-check';
import { collectPages, collectPagesText, listPageText, type ListPage } from '../../../src/upstream/paging';

describe('listPageText', () => {
  it.each<[string, ListPage]>([
    ['value first, nextLink last', { value: [], nextLink: 'https://m/next' }],
    ['value after other fields', { count: 3, value: [], '@odata.context': 'x' }],
    [
      'keys that look like numbers, __proto__, quotes and non-ASCII',
      JSON.parse('{"b":1,"10":2,"2":3,"__proto__":{"a":1},"q\\"uote":"é\\u2028","value":[]}') as ListPage,
    ],
  ])('writes what JSON.stringify writes: %s', (_name, page) => {
    const items = [{ id: 1, name: 'a' }, 'text', null, [1, 2]];
    expect(listPageText(page, JSON.stringify(items).slice(1, -1))).toBe(JSON.stringify({ ...page, value: items }));
    expect(listPageText(page, '')).toBe(JSON.stringify({ ...page, value: [] }));
  });
});

describe('collectPagesText', () => {
  const json = fc.jsonValue({ maxDepth: 2 });
  const pages = fc.array(fc.array(json, { maxLength: 4 }), { minLength: 1, maxLength: 6 });
  const limits = fc.record({ maxPages: fc.integer({ min: 1, max: 7 }), maxItems: fc.integer({ min: 0, max: 25 }), maxBytes: fc.integer({ min: 0, max: 80 }) });
  const fields = fc.dictionary(
    fc.string().filter((name) => name !== 'value' && name !== 'nextLink'),
    json,
    { maxKeys: 3 },
  );

  it('answers what collectPages answers, for any pages and bounds, reading the same pages', async () => {
    await fc.assert(
      fc.asyncProperty(pages, limits, fields, async (items, bounds, extra) => {
        const asPage = (index: number): ListPage => ({
          ...extra,
          value: items[index]!,
          ...(index + 1 < items.length ? { nextLink: `page-${index + 1}` } : {}),
        });
        const read: string[] = [];
        const fetchPage = async (link: string) => {
          read.push(link);
          return { page: asPage(Number(link.slice(5))), bytes: 10 };
        };
        const first = { page: asPage(0), bytes: 10 };
        const fullLimits = { ...bounds, deadlineAt: Infinity };
        const asObjects = await collectPages(first, fetchPage, fullLimits);
        const objectReads = read.splice(0);
        const asText = await collectPagesText(first, fetchPage, fullLimits);
        expect(read).toEqual(objectReads);
        expect(asText.stoppedBy).toBe(asObjects.stoppedBy);
        expect(listPageText(asText.page, asText.itemsText)).toBe(JSON.stringify(asObjects.page));
      }),
    );
  });

  it('asks for the next page before it writes out the one before', async () => {
    const events: string[] = [];
    const item = (page: number) => ({ toJSON: () => events.push(`write page ${page}`) && page });
    const fetchPage = async (link: string) => {
      events.push(`fetch ${link}`);
      return { page: { value: [item(1)] }, bytes: 1 };
    };
    await collectPagesText({ page: { value: [item(0)], nextLink: 'page-1' }, bytes: 1 }, fetchPage, {
      maxPages: 10,
      maxItems: 10,
      maxBytes: 10,
      deadlineAt: Infinity,
    });
    expect(events).toEqual(['fetch page-1', 'write page 0', 'write page 1']);
  });
});
