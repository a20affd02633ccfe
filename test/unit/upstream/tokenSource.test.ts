/**
 * Token sources. The credential is a fake standing in for the identity platform, which cannot
 * run here: the cache in front of it is what is tested.
 */
import type { AccessToken, TokenCredential } from '@azure/identity';
import { actorOf, bearerTokenOf, credentialTokenSource, passthroughTokenSource, staticTokenSource } from '../../../src/upstream/tokenSource';

function fakeCredential(lifetimeMs: number, now: () => number) {
  const calls: string[] = [];
  let issued = 0;
  const credential: TokenCredential = {
    getToken: async (scopes) => {
      calls.push(String(scopes));
      issued += 1;
      return { token: `token-${issued}`, expiresOnTimestamp: now() + lifetimeMs } satisfies AccessToken;
    },
  };
  return { credential, calls };
}

describe('credentialTokenSource', () => {
  it('asks each upstream’s scope once, reuses the token, and renews it five minutes before expiry', async () => {
    let clock = 0;
    const { credential, calls } = fakeCredential(60 * 60_000, () => clock);
    const source = credentialTokenSource(
      { management: credential, lifecycle: credential },
      { management: 'https://m/.default', lifecycle: 'https://l//.default' },
      () => clock,
    );
    const [first, second] = await Promise.all([source.getToken({ upstream: 'management' }), source.getToken({ upstream: 'management' })]);
    expect([first, second]).toEqual(['token-1', 'token-1']);
    expect(await source.getToken({ upstream: 'lifecycle' })).toBe('token-2');
    clock = 54 * 60_000;
    expect(await source.getToken({ upstream: 'management' })).toBe('token-1');
    clock = 56 * 60_000;
    expect(await source.getToken({ upstream: 'management' })).toBe('token-3');
    expect(calls).toEqual(['https://m/.default', 'https://l//.default', 'https://m/.default']);
  });

  it('turns a credential failure into Unauthorized, and tries again on the next call', async () => {
    let fail = true;
    const credential: TokenCredential = {
      getToken: async () => {
        if (fail) throw new Error('AADSTS700016: application not found');
        return { token: 'ok', expiresOnTimestamp: Date.now() + 3600_000 };
      },
    };
    const source = credentialTokenSource({ management: credential, lifecycle: credential }, { management: 's', lifecycle: 's' });
    await expect(source.getToken({ upstream: 'management' })).rejects.toMatchObject({ code: 'Unauthorized', status: 401 });
    fail = false;
    expect(await source.getToken({ upstream: 'management' })).toBe('ok');
  });
});

describe('passthrough and static', () => {
  it('reads the bearer token, and asks for one when there is none', async () => {
    expect(bearerTokenOf('Bearer abc.def')).toBe('abc.def');
    expect(bearerTokenOf('bearer   xyz ')).toBe('xyz');
    expect(bearerTokenOf('Basic abc')).toBeUndefined();
    await expect(passthroughTokenSource().getToken({ upstream: 'management', callerAuthorization: 'Bearer t' })).resolves.toBe('t');
    await expect(passthroughTokenSource().getToken({ upstream: 'management' })).rejects.toMatchObject({ code: 'MissingBearerToken' });
    await expect(staticTokenSource('s').getToken({ upstream: 'lifecycle' })).resolves.toBe('s');
  });
});

describe('actorOf', () => {
  const jwt = (claims: Record<string, unknown>) =>
    ['{"alg":"none"}', JSON.stringify(claims)].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.sig';
  const principal = { tid: '33333333-3333-3333-3333-333333333333', oid: '44444444-4444-4444-4444-444444444444' };

  it('is the principal: a refreshed token of the same tenant and object id is the same actor', () => {
    expect(actorOf(jwt({ ...principal, iat: 1 }))).toBe(actorOf(jwt({ ...principal, iat: 3601 })));
  });

  it.each<[string, string, string]>([
    ['another object id', jwt(principal), jwt({ ...principal, oid: '55555555-5555-5555-5555-555555555555' })],
    ['another tenant', jwt(principal), jwt({ ...principal, tid: '66666666-6666-6666-6666-666666666666' })],
    ['a token without tid', jwt({ oid: principal.oid, iat: 1 }), jwt({ oid: principal.oid, iat: 2 })],
    ['two opaque tokens', 'opaque-token-one', 'opaque-token-two'],
  ])('tells apart %s', (_title, a, b) => {
    expect(actorOf(a)).not.toBe(actorOf(b));
  });

  it('is a digest, never the token or the ids themselves', () => {
    const actor = actorOf(jwt(principal));
    expect(actor).toMatch(/^[0-9a-f]{64}$/);
    expect(actorOf('opaque-token-one')).toBe(actorOf('opaque-token-one'));
  });
});
