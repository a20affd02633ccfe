/**
 * The call log's caller is never a name the caller chose: principal headers count only with
 * App Service Authentication on, and token claims are labels marked unverified.
 */
import { callerOf, keyFingerprintOf } from '../../../src/http/caller';

const headers = (values: Record<string, string>) => new Headers(values);
const unsignedToken = (claims: Record<string, unknown>) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

describe('callerOf', () => {
  it('ignores a principal header the platform did not set', () => {
    const identity = callerOf(headers({ 'x-ms-client-principal-name': 'admin@contoso.com', 'x-functions-key': 'the-key' }), new URLSearchParams(), false);
    expect(identity).toEqual({ caller: keyFingerprintOf('the-key') });
  });

  it('trusts the principal header with App Service Authentication on', () => {
    const identity = callerOf(headers({ 'x-ms-client-principal-name': 'bot@contoso.com', 'x-functions-key': 'the-key' }), new URLSearchParams(), true);
    expect(identity.caller).toBe('principal:bot@contoso.com');
  });

  it("logs a token's subject only apart from the caller, marked unverified", () => {
    const identity = callerOf(headers({ authorization: `Bearer ${unsignedToken({ oid: 'chosen-by-caller' })}`, 'x-functions-key': 'the-key' }), new URLSearchParams(), false);
    expect(identity).toEqual({ caller: keyFingerprintOf('the-key'), unverifiedTokenSubject: 'chosen-by-caller' });
  });

  it.each(['code', 'Code', 'CODE'])('reads the key from ?%s=', (name) => {
    expect(callerOf(headers({}), new URLSearchParams(`${name}=the-key`), false).caller).toBe(keyFingerprintOf('the-key'));
  });

  it('is anonymous with nothing to go on', () => {
    expect(callerOf(headers({}), new URLSearchParams(), false)).toEqual({ caller: 'anonymous' });
  });
});
