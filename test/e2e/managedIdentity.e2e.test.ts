/**
 * `UPSTREAM_AUTH=managed` (the default) gets its token from the function app's managed identity:
 * on App Service and Functions, the endpoint in IDENTITY_ENDPOINT, asked with IDENTITY_HEADER.
 * A stand-in for that endpoint on loopback answers with the token the emulator accepts. The
 * token travels through @azure/identity and MSAL over the SDK's own HTTP client (node:http), not
 * the global fetch whose undici differs with each Node version, so this runs alike on every one.
 */
import { request } from 'undici';
import { emulatorToken, startGateway } from '../../tools/harness/gatewayFixture';
import { startIdentityEndpoint, type IdentityEndpoint } from '../helpers/identityEndpoint';

const usagesPath = 'subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01';

let identityEndpoint: IdentityEndpoint;
beforeAll(async () => {
  identityEndpoint = await startIdentityEndpoint(() => emulatorToken);
});
afterAll(() => identityEndpoint.close());

it('gets the upstream token from the managed identity endpoint and calls with it', async () => {
  const gateway = await startGateway({ UPSTREAM_AUTH: 'managed', AZURE_TOKEN_CREDENTIALS: 'ManagedIdentityCredential', ...identityEndpoint.env });
  try {
    const usages = await request(gateway.api(usagesPath));
    expect(await usages.body.json()).toMatchObject({ value: expect.any(Array) });
    expect(usages.statusCode).toBe(200);
    expect(gateway.emulator.upstreamRequests()[0]!.headers.authorization).toBe(`Bearer ${emulatorToken}`);
    const { asked } = identityEndpoint;
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((each) => each.header === identityEndpoint.env.IDENTITY_HEADER && each.path === '/msi/token')).toBe(true);
  } finally {
    await gateway.stop();
  }
});
