/**
 * `UPSTREAM_AUTH=managed` (the default) gets its token from the function app's managed identity:
 * on App Service and Functions, the endpoint in IDENTITY_ENDPOINT, asked with IDENTITY_HEADER.
 * A stand-in for that endpoint on loopback answers with the token the emulator accepts. The
 * token travels through @azure/identity and MSAL over the SDK's own HTTP client (node:http), not
 * the global fetch whose undici differs with each Node version, so this runs alike on every one.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { emulatorToken, startGateway } from '../helpers/gatewayFixture';

const identityHeader = 'identity-header-of-this-test';
const usagesPath = 'subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01';

let identityEndpoint: Server;
const asked: { url: string; header: string | undefined }[] = [];

beforeAll(async () => {
  identityEndpoint = createServer((incoming: IncomingMessage, response) => {
    asked.push({ url: incoming.url ?? '', header: incoming.headers['x-identity-header'] as string | undefined });
    if (incoming.headers['x-identity-header'] !== identityHeader) {
      response.writeHead(401).end();
      return;
    }
    const resource = new URL(incoming.url ?? '/', 'http://127.0.0.1').searchParams.get('resource');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ access_token: emulatorToken, expires_on: String(Math.floor(Date.now() / 1000) + 3600), resource, token_type: 'Bearer' }));
  });
  await new Promise<void>((resolve) => identityEndpoint.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => identityEndpoint.close(() => resolve())));

it('gets the upstream token from the managed identity endpoint and calls with it', async () => {
  const endpoint = `http://127.0.0.1:${(identityEndpoint.address() as AddressInfo).port}/msi/token`;
  const gateway = await startGateway({ UPSTREAM_AUTH: 'managed', AZURE_TOKEN_CREDENTIALS: 'ManagedIdentityCredential', IDENTITY_ENDPOINT: endpoint, IDENTITY_HEADER: identityHeader });
  try {
    const usages = await request(gateway.api(usagesPath));
    expect(await usages.body.json()).toMatchObject({ value: expect.any(Array) });
    expect(usages.statusCode).toBe(200);
    expect(gateway.emulator.upstreamRequests()[0]!.headers.authorization).toBe(`Bearer ${emulatorToken}`);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((each) => each.header === identityHeader && each.url.startsWith('/msi/token?'))).toBe(true);
  } finally {
    await gateway.stop();
  }
});
