/** The local host's reading of ASP.NET route templates, and its refusal of overlapping routes. */
import { matchRoute, parseRouteTemplate, routesOverlap } from '../../../tools/localHost/routeTemplate';
import { scopeRouteTemplate } from '../../../src/http/scopeRoute';
import { operations, resolvePathTemplate } from '../../../src/spec/catalogue';

describe('matchRoute', () => {
  it.each<[string, string, Record<string, string> | undefined]>([
    ['items/{id}', 'items/42', { id: '42' }],
    ['items/{id}', 'ITEMS/42', { id: '42' }],
    ['items/{id}', 'items', undefined],
    ['items/{id}', 'items/42/more', undefined],
    ['items/{id?}', 'items', {}],
    ['items/{id:int}', 'items/abc', undefined],
    ['items/{id:guid}', 'items/6f1a2b3c-1234-4abc-9def-0123456789ab', { id: '6f1a2b3c-1234-4abc-9def-0123456789ab' }],
    ['items/{name:minlength(3):maxlength(5)}', 'items/ab', undefined],
    ['items/{name:length(2,3)}', 'items/abc', { name: 'abc' }],
    ['items/{id:range(1,10)}', 'items/11', undefined],
    ['files/{*rest}', 'files/a/b/c', { rest: 'a/b/c' }],
    ['items/{name}', 'items/a%2Fb', { name: 'a/b' }],
    ['{*path:regex(^.+/(leaf|twig)$)}', 'tree/branch/leaf', { path: 'tree/branch/leaf' }],
    ['{*path:regex(^.+/(leaf|twig)$)}', 'tree/branch/root', undefined],
  ])('%s on %s', (template, path, expected) => {
    expect(matchRoute(parseRouteTemplate(template), path)).toEqual(expected);
  });

  it('refuses a catch-all that is not last, and unknown constraints', () => {
    expect(() => parseRouteTemplate('{*rest}/tail')).toThrow(/last segment/);
    expect(() => parseRouteTemplate('items/{id:prime}')).toThrow(/Unknown route constraint/);
  });
});

describe('routesOverlap', () => {
  const overlap = (a: string, b: string) => routesOverlap(parseRouteTemplate(a), parseRouteTemplate(b));

  it.each<[string, string, boolean]>([
    ['items/{id}', 'items/{name}', true],
    ['items/{id:int}', 'items/latest', false],
    ['items/{id}', 'items/latest', true],
    ['items/{id}', 'orders/{id}', false],
    ['items/{id}', 'items/{id}/parts', false],
    ['{*rest}', 'items/{id}', true],
    ['{*path:regex(^.+/(leaf|twig)$)}', 'subscriptions/{id}/usages', false],
    ['{*path:regex(^.+/(leaf|twig)$)}', 'trees/{id}/leaf', true],
  ])('%s and %s → %s', (a, b, expected) => {
    expect(overlap(a, b)).toBe(expected);
  });

  it('finds no overlap among the app’s own operation routes', () => {
    const scoped = operations.filter((operation) => operation.pathTemplate.startsWith('{scope}/'));
    const templates = [
      scopeRouteTemplate(scoped, 'Vendor'),
      ...operations.filter((operation) => !scoped.includes(operation)).map((operation) => resolvePathTemplate(operation, 'Vendor')),
      'health',
    ].map(parseRouteTemplate);
    for (const [index, first] of templates.entries()) {
      for (const second of templates.slice(index + 1)) expect([first.template, second.template, routesOverlap(first, second)]).toEqual([first.template, second.template, false]);
    }
  });
});
