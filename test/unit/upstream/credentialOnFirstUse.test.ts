/**
 * The credential built on first use: @azure/identity is loaded by the first token request, and a
 * package that does not load is a 500 of the app, never the 401 of a refused token.
 */
import type { AccessToken, TokenCredential } from '@azure/identity';
import { GatewayError } from '../../../src/errors';
import * as lazyPackages from '../../../src/loading/lazyPackages';
import { parseConfig } from '../../../src/settings/config';
import { failureForLog } from '../../../src/rules/redaction';
import { createTokenSource } from '../../../src/app/services';
import { credentialOnFirstUse } from '../../../src/identity/credentialOnFirstUse';
import { credentialTokenSource } from '../../../src/upstream/tokenSource';

afterEach(() => jest.restoreAllMocks());

const scopes = { management: 'https://m/.default', lifecycle: 'https://l//.default' };

it('loads the package and builds the credential on the first token request, once', async () => {
  const load = jest.spyOn(lazyPackages, 'identityPackage');
  const built: TokenCredential = { getToken: jest.fn(async () => ({ token: 't', expiresOnTimestamp: Date.now() + 3600_000 })) };
  const create = jest.fn((_identity: typeof import('@azure/identity')) => built);
  const credential = credentialOnFirstUse(create, 10_000);
  expect(load).not.toHaveBeenCalled();
  expect(create).not.toHaveBeenCalled();
  await credential.getToken('https://m/.default');
  await credential.getToken('https://m/.default');
  expect(load).toHaveBeenCalled();
  expect(create).toHaveBeenCalledTimes(1);
  expect(create.mock.calls[0]![0]).toHaveProperty('DefaultAzureCredential');
  expect(built.getToken).toHaveBeenCalledTimes(2);
});

it('answers a package that does not load with InternalError, not Unauthorized', async () => {
  jest.spyOn(lazyPackages, 'identityPackage').mockImplementation(() => {
    throw new Error("Cannot find module './azure-identity.js'");
  });
  const credential = credentialOnFirstUse((identity) => new identity.DefaultAzureCredential(), 10_000);
  const source = credentialTokenSource({ management: credential, lifecycle: credential }, scopes);
  const refusal = await source.getToken({ upstream: 'management' }).catch((error: unknown) => error);
  expect(refusal).toBeInstanceOf(GatewayError);
  expect(refusal).toMatchObject({ code: 'InternalError', status: 500 });
  expect((refusal as GatewayError).cause).toEqual(new Error("Cannot find module './azure-identity.js'"));
});

it('answers settings the credential refuses with InternalError, and logs why without the password', async () => {
  // Built at start before, this failed the app's start; built on first use, it must not read as a 401.
  const config = parseConfig({
    MANAGEMENT_BASE_URL: 'http://127.0.0.1:9',
    LIFECYCLE_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_AUTH: 'managed',
    LIFECYCLE_TENANT_ID: 'contoso tenant',
    LIFECYCLE_CLIENT_ID: 'client',
    LIFECYCLE_USERNAME: 'user@contoso.example',
    LIFECYCLE_PASSWORD: 'the-password-itself',
  });
  const refusal = await createTokenSource(config)
    .getToken({ upstream: 'lifecycle' })
    .catch((error: unknown) => error);
  expect(refusal).toBeInstanceOf(GatewayError);
  expect(refusal).toMatchObject({ code: 'InternalError', status: 500 });
  const logged = failureForLog(refusal);
  expect(logged).toMatch(/Caused by: .*tenant id/i);
  expect(logged).not.toContain('the-password-itself');
});

it('fails a token request that never ends within its time limit, and builds a fresh credential for the next', async () => {
  jest.spyOn(lazyPackages, 'identityPackage').mockImplementation(() => ({}) as typeof import('@azure/identity'));
  const answers = [
    // The first never answers (an endpoint that holds the request open), whatever it is told.
    (): Promise<AccessToken> => new Promise(() => undefined),
    async (): Promise<AccessToken> => ({ token: 'fresh', expiresOnTimestamp: Date.now() + 3600_000 }),
  ];
  const built: TokenCredential[] = [];
  const credential = credentialOnFirstUse(() => {
    const made: TokenCredential = { getToken: jest.fn(answers[built.length]!) };
    built.push(made);
    return made;
  }, 50);
  await expect(credential.getToken('https://m/.default')).rejects.toMatchObject({ code: 'UpstreamTimeout', status: 504 });
  expect(await credential.getToken('https://m/.default')).toMatchObject({ token: 'fresh' });
  expect(built).toHaveLength(2);
  // The stuck request was told to stop.
  const options = (built[0]!.getToken as jest.Mock).mock.calls[0]![1] as { abortSignal: AbortSignal };
  expect(options.abortSignal.aborted).toBe(true);
});
