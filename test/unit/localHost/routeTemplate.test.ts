/** The local host's reading of ASP.NET route templates, their precedence, and its refusal of overlapping routes. */
import type { RegisteredFunction } from '../../../tools/localHost/coreApi';
import { collectHttpRoutes } from '../../../tools/localHost/functionRegistrations';
import { comparePrecedence, matchRoute, parseRouteTemplate, routesOverlap } from '../../../tools/localHost/routeTemplate';
import { appRoutes } from '../../../src/routes/appRoutes';
import { scopeRouteTemplate } from '../../../src/http/operationRoute';
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
      for (const second of templates.slice(index + 1))
        expect([first.template, second.template, routesOverlap(first, second)]).toEqual([first.template, second.template, false]);
    }
  });
});

describe('route precedence', () => {
  const precedence = (a: string, b: string) => Math.sign(comparePrecedence(parseRouteTemplate(a), parseRouteTemplate(b)));
  /** A registration as the programming model hands it to the host. */
  const registered = (name: string, route: string, methods = ['GET']): RegisteredFunction =>
    ({
      metadata: { name, bindings: { request: { type: 'httpTrigger', direction: 'in', route, methods } } },
      callback: () => undefined,
    }) as unknown as RegisteredFunction;
  const firstMatch = (functions: RegisteredFunction[], path: string) =>
    collectHttpRoutes(functions).find((route) => matchRoute(route.template, path))?.fn.metadata.name;

  it.each<[string, string, number]>([
    ['orchestrations/counts', 'orchestrations/{id}', -1],
    ['items/{id:int}', 'items/{id}', -1],
    ['items/{id}', 'items/{*rest}', -1],
    ['{*path:regex(^a$)}', '{*path}', -1],
    ['items/{id}', 'items/{name}', 0],
    ['a/{x}/c', '{y}/b/{z}', -1],
  ])('%s before %s: %d', (a, b, expected) => {
    expect(precedence(a, b)).toBe(expected);
    expect(precedence(b, a)).toBe(-expected || 0);
  });

  it('tries a literal segment before a parameter, whatever order the functions were registered in', () => {
    const functions = [registered('items-get', 'items/{id}'), registered('items-counts', 'items/counts')];
    expect(firstMatch(functions, 'items/counts')).toBe('items-counts');
    expect(firstMatch(functions, 'items/42')).toBe('items-get');
    expect(firstMatch([...functions].reverse(), 'items/counts')).toBe('items-counts');
  });

  it('refuses overlapping routes that precedence cannot order, or that their function names order the other way', () => {
    expect(() => collectHttpRoutes([registered('a-one', 'items/{id}'), registered('b-two', 'items/{name}')])).toThrow(/Overlapping routes/);
    // The real host tries them by function name: "items-get" would come before "items-latest".
    expect(() => collectHttpRoutes([registered('items-get', 'items/{id}'), registered('items-latest', 'items/latest')])).toThrow(/items-get/);
    expect(() => collectHttpRoutes([registered('items-get', 'items/{id}'), registered('items-latest', 'items/latest', ['POST'])])).not.toThrow();
  });

  it('orders the app’s own orchestrations/counts before orchestrations/{id}, by precedence and by name', () => {
    const functions = [appRoutes.orchestrationsGet, appRoutes.orchestrationsCounts].map((route) => registered(route.name, route.route));
    expect(firstMatch(functions, 'orchestrations/counts')).toBe('orchestrations-counts');
  });
});
