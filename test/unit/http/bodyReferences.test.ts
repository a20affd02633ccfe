/** Every spelling of a resource a request body may name is held to the caller's scopes; dot segments are refused. */
import { assertBodyWithinScopes, referenceIn } from '../../../src/calls/bodyReferences';

const own = '/subscriptions/sub-1/resourceGroups/rg-own';
const prod = 'subscriptions/sub-1/resourceGroups/rg-prod/providers/Microsoft.ManagedIdentity/userAssignedIdentities/admin';

describe('referenceIn', () => {
  it.each<[string, string, string | undefined]>([
    ['the canonical form', `/${prod}`, `/${prod}`],
    ['two leading slashes', `//${prod}`, `/${prod}`],
    ['no leading slash', prod, `/${prod}`],
    ['leading and trailing blanks', ` \t/${prod}\n`, `/${prod}`],
    ['a full URL, its query cut', `https://management.azure.com/${prod}?api-version=2024-05-01`, `/${prod}`],
    ['a scheme-relative URL', `//management.azure.com/${prod}`, `/${prod}`],
    ['backslashes', `\\${prod.replaceAll('/', '\\')}`, `/${prod}`],
    ['percent-encoded', `%2F${prod.replaceAll('/', '%2F')}`, `/${prod}`],
    [
      'another case, and a long s (ARM upper-cases it to S)',
      `/\u017FUBSCRIPTIONS/sub-1/resourceGroups/rg-prod`,
      '/\u017FUBSCRIPTIONS/sub-1/resourceGroups/rg-prod',
    ],
    ['under a management group', `/providers/Microsoft.Management/managementGroups/mg/${prod}`, `/${prod}`],
    ['text that names none', 'nginx:latest', undefined],
    ['the word alone', 'subscriptions', undefined],
  ])('%s', (_title, text, path) => {
    expect(referenceIn(text)?.path).toBe(path);
  });

  it.each([
    '/subscriptions/sub-1/resourceGroups/rg-own/../rg-prod',
    '/subscriptions/sub-1/./x',
    'https://h/subscriptions/sub-1/%2e%2e/sub-2',
    '/subscriptions/sub-1/%252E/x',
  ])('%s has dot segments', (text) => {
    expect(referenceIn(text)?.dotSegments).toBe(true);
  });
});

describe('assertBodyWithinScopes', () => {
  const refusal = (body: unknown) => {
    try {
      assertBodyWithinScopes(body, undefined, [own]);
      return undefined;
    } catch (error) {
      return error as { code: string; status: number; target?: string };
    }
  };

  it.each([`//${prod}`, prod, ` /${prod}`, `https://management.azure.com/${prod}`])('refuses %j outside the scopes, naming where it is', (reference) => {
    expect(refusal({ properties: { subnetIds: [{ id: reference }] } })).toMatchObject({
      code: 'ScopeNotAllowed',
      status: 403,
      target: 'properties.subnetIds[0].id',
    });
    expect(refusal({ identity: { userAssignedIdentities: { [reference]: {} } } })).toMatchObject({ code: 'ScopeNotAllowed' });
  });

  it('refuses a dot segment with 400, even one that resolves within the scopes', () => {
    expect(refusal({ id: `${own}/x/../y` })).toMatchObject({ code: 'InvalidRequestBody', status: 400, target: 'id' });
  });

  it("takes the caller's own resources in any spelling", () => {
    for (const reference of [`/${own}/x`, `${own.slice(1)}/x`, ` ${own}`, `https://management.azure.com${own}/x?api-version=1`]) {
      expect(refusal({ id: reference })).toBeUndefined();
    }
  });
});
