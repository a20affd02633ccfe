/**
 * The `{scope}` function (src/http/operationRoute.ts): the operation is the one whose suffix ends
 * the path and whose method is the request's, read from the same entries the registration reads;
 * a method the path does not take is 405 with Allow, and a path no operation ends with is 404.
 */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { scopeDispatcher, scopeRouteMethods, scopeRouteParameter, type OperationHandler } from '../../../src/http/operationRoute';
import { operations, type OperationSpec } from '../../../src/spec/catalogue';

const listing = operations.find((operation) => operation.pathTemplate.startsWith('{scope}/') && operation.method === 'GET')!;
/** A `{scope}` PUT on the same path as a documented GET, as a later operation could add. */
const putOnSamePath: OperationSpec = { ...listing, name: 'Things_Put', operationId: 'Things_Put', method: 'PUT' };
const elsewhere = operations.filter((operation) => operation.pathTemplate.startsWith('{scope}/') && operation !== listing)[0]!;

const reached: { name: string; params?: Record<string, string> }[] = [];
const handlerOf =
  (name: string): OperationHandler =>
  async (_request, _context, params) => {
    reached.push({ name, params });
    return { status: 200 };
  };
const dispatch = scopeDispatcher(
  [listing, putOnSamePath, elsewhere].map((operation) => ({ operation, handler: handlerOf(operation.name) })),
  'Vendor',
);

const suffixOf = (operation: OperationSpec) => operation.pathTemplate.slice('{scope}/'.length).replace('{P}', 'Vendor');
const scope = 'subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg';

function call(method: string, path: string): Promise<HttpResponseInit> {
  const request = new HttpRequest({ method, url: `https://gw.example/api/${path}`, params: { [scopeRouteParameter]: path } });
  return dispatch(request, new InvocationContext({ functionName: 'scopeOperations' }));
}

beforeEach(() => reached.splice(0));

it('registers the methods its operations take', () => {
  expect(scopeRouteMethods([listing, putOnSamePath, elsewhere]).sort()).toEqual(['GET', 'PUT']);
});

it('reaches the operation of the path and the method, with the scope before its suffix', async () => {
  await call('GET', `${scope}/${suffixOf(listing)}`);
  await call('PUT', `${scope}/${suffixOf(listing)}`);
  await call('GET', `${scope}/${suffixOf(elsewhere)}`);
  expect(reached).toEqual([
    { name: listing.name, params: { scope } },
    { name: putOnSamePath.name, params: { scope } },
    { name: elsewhere.name, params: { scope } },
  ]);
});

it('answers a method the path does not take with 405 and the methods it takes in Allow, reaching nothing', async () => {
  const answer = await call('DELETE', `${scope}/${suffixOf(listing)}`);
  expect(answer.status).toBe(405);
  expect((answer.headers as Record<string, string>).allow).toBe('GET, PUT');
  expect(JSON.parse(String(answer.body))).toMatchObject({ error: { code: 'MethodNotAllowed' } });
  const onlyGet = await call('POST', `${scope}/${suffixOf(elsewhere)}`);
  expect((onlyGet.headers as Record<string, string>).allow).toBe('GET');
  expect(reached).toEqual([]);
});

it('answers a path no operation ends with 404', async () => {
  const answer = await call('GET', `${scope}/providers/Vendor.Nothing/here`);
  expect(answer.status).toBe(404);
  expect(reached).toEqual([]);
});
