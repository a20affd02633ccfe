/**
 * Who the caller is: never a name the caller chose. Principal headers count only with App
 * Service Authentication on; token claims are labels marked unverified.
 */
import { callerLogFields, callerOf, keyFingerprintOf } from '../../../src/callers/callerIdentity';

const headers = (values: Record<string, string>) => new Headers(values);
const unsignedToken = (claims: Record<string, unknown>) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
const principalHeader = (claims: { typ: string; val: string }[], roleType = 'roles') =>
  Buffer.from(JSON.stringify({ auth_typ: 'aad', claims, name_typ: 'name', role_typ: roleType })).toString('base64');
const operator = {
  'x-ms-client-principal-id': '5F1A2B3C-1234-4ABC-9DEF-0123456789AB',
  'x-ms-client-principal-name': 'operator@contoso.com',
  'x-ms-client-principal': principalHeader([
    { typ: 'roles', val: 'Gateway.Operator' },
    { typ: 'roles', val: 'Gateway.Reader' },
    { typ: 'name', val: 'operator@contoso.com' },
  ]),
};

describe('callerOf', () => {
  it('ignores principal headers the platform did not set: they grant and name nothing', () => {
    const identity = callerOf(headers({ ...operator, 'x-functions-key': 'the-key' }), new URLSearchParams(), false);
    expect(identity).toEqual({ primary: keyFingerprintOf('the-key'), selectors: [keyFingerprintOf('the-key')] });
  });

  it('names the principal by its object id, with its key and app roles, with App Service Authentication on', () => {
    const identity = callerOf(headers({ ...operator, 'x-functions-key': 'the-key' }), new URLSearchParams(), true);
    expect(identity).toEqual({
      primary: 'principal:5f1a2b3c-1234-4abc-9def-0123456789ab',
      selectors: ['principal:5f1a2b3c-1234-4abc-9def-0123456789ab', keyFingerprintOf('the-key'), 'role:Gateway.Operator', 'role:Gateway.Reader'],
      principalName: 'operator@contoso.com',
    });
    expect(callerLogFields(identity)).toEqual({ caller: 'principal:5f1a2b3c-1234-4abc-9def-0123456789ab', principalName: 'operator@contoso.com' });
  });

  it('reads roles under the role type the principal names, and the object id from its claims', () => {
    const identity = callerOf(
      headers({
        'x-ms-client-principal': principalHeader(
          [
            { typ: 'http://schemas.microsoft.com/identity/claims/objectidentifier', val: 'abc-123' },
            { typ: 'appRole', val: 'Gateway.Admin' },
          ],
          'appRole',
        ),
      }),
      new URLSearchParams(),
      true,
    );
    expect(identity.selectors).toEqual(['principal:abc-123', 'role:Gateway.Admin']);
  });

  it.each(['not base64 json', 'x'.repeat(20_000), Buffer.from('{"claims":"nope"}').toString('base64')])(
    'reads nothing from a principal header it cannot use (%#)',
    (value) => {
      expect(callerOf(headers({ 'x-ms-client-principal': value }), new URLSearchParams(), true)).toEqual({ primary: 'anonymous', selectors: [] });
    },
  );

  it("logs a token's subject only apart from the caller, marked unverified", () => {
    const identity = callerOf(
      headers({ authorization: `Bearer ${unsignedToken({ oid: 'chosen-by-caller' })}`, 'x-functions-key': 'the-key' }),
      new URLSearchParams(),
      false,
    );
    expect(callerLogFields(identity)).toEqual({ caller: keyFingerprintOf('the-key'), unverifiedTokenSubject: 'chosen-by-caller' });
  });

  it.each(['code', 'Code', 'CODE'])('reads the key from ?%s=', (name) => {
    expect(callerOf(headers({}), new URLSearchParams(`${name}=the-key`), false).primary).toBe(keyFingerprintOf('the-key'));
  });

  it('names the caller by the key the host authenticated: the first header line, whatever follows it', () => {
    const twoLines = new Headers();
    twoLines.append('x-functions-key', 'the-key');
    twoLines.append('x-functions-key', 'chosen-by-caller');
    for (const given of [twoLines, headers({ 'x-functions-key': 'the-key,chosen-by-caller' })]) {
      expect(callerOf(given, new URLSearchParams('code=another'), false)).toEqual({
        primary: keyFingerprintOf('the-key'),
        selectors: [keyFingerprintOf('the-key')],
      });
    }
    expect(callerOf(headers({}), new URLSearchParams('code=the-key&Code=chosen-by-caller'), false).primary).toBe(keyFingerprintOf('the-key'));
    // An empty first line authenticates nothing at the host, which then reads no ?code= either.
    expect(callerOf(headers({ 'x-functions-key': ', the-key' }), new URLSearchParams('code=the-key'), false).primary).toBe('anonymous');
  });

  it('is anonymous with nothing to go on', () => {
    expect(callerOf(headers({}), new URLSearchParams(), false)).toEqual({ primary: 'anonymous', selectors: [] });
  });
});
