/**
 * Identity-based storage end to end, as a deployment to Azure runs it: the app started as on an
 * instance in Azure (WEBSITE_INSTANCE_ID set, so no embedded Azurite and no fallback to development
 * storage), its storage named by `AzureWebJobsStorage__blobServiceUri` with
 * `__credential=managedidentity` and `__clientId`, and nothing else. Azurite runs in its OAuth mode
 * over HTTPS and checks each bearer token; the managed identity endpoint is a stand-in on 127.0.0.1
 * minting them. A long-running start, its polls by the timer, a certificate refresh and health all
 * work, and every request Azurite receives carries a bearer token: a storage use that fell back to
 * a key (or to development storage, where nothing listens) fails this test.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startAzurite, type EmbeddedAzurite } from '../../tools/embeddedAzurite';
import { selfSignedCertificate } from '../../tools/localHost/httpsCertificate';
import { startEmulator, type Emulator } from '../../tools/emulator/emulatorServer';
import { runAppExpectingFailure, startApp, type AppProcess } from '../../tools/harness/appProcess';
import { emulatorToken } from '../../tools/harness/gatewayFixture';
import { startIdentityEndpoint, storageAccessToken, type IdentityEndpoint } from '../helpers/identityEndpoint';

const storageIdentity = '11111111-2222-4333-8444-555555555555';
const monitoringIdentity = '66666666-7777-4888-8999-aaaaaaaaaaaa';
const monitorToken = 'token-for-azure-monitor';
const subscription = '00000000-0000-0000-0000-000000000000';
const environment = { projectId: 41, environmentId: randomUUID() };
const folder = mkdtempSync(join(tmpdir(), 'identity-storage-'));
const storageAuthorizations: string[] = [];
/** The path and query of each storage request. */
const storageRequests: string[] = [];
/** What the Application Insights stand-in received: each request's Authorization header. */
const ingestionAuthorizations: string[] = [];

let azurite: EmbeddedAzurite;
let emulator: Emulator;
let identity: IdentityEndpoint;
let app: AppProcess;
let ingestion: Server;

beforeAll(async () => {
  const { certPem, keyPem } = selfSignedCertificate(new Date());
  writeFileSync(join(folder, 'cert.pem'), certPem);
  writeFileSync(join(folder, 'key.pem'), keyPem);
  // Application Insights' ingestion (HTTPS, as the exporter insists), with local auth off: it takes only a bearer token.
  ingestion = createServer({ cert: certPem, key: keyPem }, (incoming, response) => {
    ingestionAuthorizations.push(incoming.headers.authorization ?? '(none)');
    incoming.resume().on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"itemsReceived":0,"itemsAccepted":0,"errors":[]}'));
  });
  await new Promise<void>((resolve) => ingestion.listen(0, '127.0.0.1', resolve));
  azurite = await startAzurite({ oauth: { certPath: join(folder, 'cert.pem'), keyPath: join(folder, 'key.pem') } });
  azurite.onRequest((incoming) => {
    storageAuthorizations.push(incoming.headers.authorization ?? '(none)');
    storageRequests.push(incoming.url ?? '');
  });
  emulator = await startEmulator({ token: emulatorToken, lroSteps: 2, retryAfterSeconds: 1 });
  identity = await startIdentityEndpoint((resource) =>
    resource.startsWith('https://storage.azure.com') ? storageAccessToken() : resource.startsWith('https://monitor.azure.com') ? monitorToken : emulatorToken,
  );
  app = await startApp({
    ...identity.env,
    WEBSITE_INSTANCE_ID: 'instance-of-this-test',
    AzureWebJobsStorage__blobServiceUri: azurite.blobEndpoint,
    AzureWebJobsStorage__credential: 'managedidentity',
    AzureWebJobsStorage__clientId: storageIdentity,
    // The app's own certificate authority for Azurite's HTTPS, as a machine trusts a real one.
    NODE_EXTRA_CA_CERTS: join(folder, 'cert.pem'),
    MANAGEMENT_BASE_URL: emulator.url,
    LIFECYCLE_BASE_URL: emulator.url,
    UPSTREAM_AUTH: 'managed',
    AZURE_TOKEN_CREDENTIALS: 'ManagedIdentityCredential',
    CERT_ENVIRONMENTS: JSON.stringify([environment]),
    ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
    LRO_MIN_POLL_SECONDS: '1',
    LRO_DEFAULT_POLL_SECONDS: '1',
    APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=00000000-0000-4000-8000-0000000000aa;IngestionEndpoint=https://127.0.0.1:${(ingestion.address() as AddressInfo).port}/`,
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: `Authorization=AAD;ClientId=${monitoringIdentity}`,
    // The exporter's own usage reports go to Microsoft, not to the connection string.
    APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true',
    APPLICATIONINSIGHTS_SDKSTATS_DISABLED: 'true',
  });
}, 60_000);

afterAll(async () => {
  await app?.stop();
  ingestion?.closeAllConnections();
  await Promise.all([emulator?.close(), azurite?.close(), identity?.close(), new Promise((resolve) => ingestion?.close(resolve))]);
  rmSync(folder, { recursive: true, force: true });
});

async function json(url: string, init: Parameters<typeof request>[1] = {}) {
  const response = await request(url, init);
  return { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as Record<string, unknown> };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 25_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

it('says at start which storage and which identity, and that no key is used', () => {
  const storageLine = app.lines.find((line) => /storage/.test(line) && line.includes(azurite.blobEndpoint));
  expect(storageLine).toContain(`the managed identity ${storageIdentity} (user-assigned); no key`);
  expect(app.lines.join('\n')).not.toMatch(/Azurite in memory|AccountKey/);
});

it('runs a long-running start to its end, polled by the timer, on identity-based storage', async () => {
  const started = await json(
    `${app.url}/api/subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/on-identity?api-version=2025-09-01`,
    {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } }),
    },
  );
  expect(started.status).toBe(201);
  const id = started.headers['x-orchestration-id'] as string;
  const ended = await eventually(
    () => json(`${app.url}/api/orchestrations/${id}`),
    (answer) => answer.body.runtimeStatus === 'Completed',
  );
  expect(ended.body).toMatchObject({ runtimeStatus: 'Completed' });
  expect(emulator.upstreamRequests({ method: 'GET', pathIncludes: '/containerGroups/on-identity' }).length).toBeGreaterThan(0);
});

it('refreshes a certificate into identity-based storage and reads it back', async () => {
  const refreshed = await json(`${app.url}/api/certificates/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...environment, force: true }),
  });
  expect(refreshed.status).toBe(200);
  expect(refreshed.body).toMatchObject({ results: [{ outcome: 'downloaded' }] });
  const metadata = await json(`${app.url}/api/certificates/${environment.projectId}/${environment.environmentId}`);
  expect(metadata.status).toBe(200);
});

it('reports storage healthy through a read the data roles allow', async () => {
  const health = await json(`${app.url}/api/health`);
  expect(health.body).toMatchObject({ dependencies: { storage: { ok: true, detail: 'reachable' } } });
});

it('asked storage only what Storage Blob Data Owner allows: containers and blobs, never the account', () => {
  // Account-level operations (Get Blob Service Properties, say) need blobServices/read, which no blob data role holds.
  const accountLevel = storageRequests.filter((url) => /^\/devstoreaccount1\/?(\?|$)/.test(url));
  expect(storageRequests.length).toBeGreaterThan(10);
  expect(accountLevel).toEqual([]);
});

it('sent every storage request with a bearer token of the user-assigned identity, and none with a key', () => {
  expect(storageAuthorizations.length).toBeGreaterThan(10);
  expect(storageAuthorizations.filter((authorization) => !authorization.startsWith('Bearer '))).toEqual([]);
  const storageAsks = identity.asked.filter((ask) => ask.resource?.startsWith('https://storage.azure.com'));
  expect(storageAsks.length).toBeGreaterThan(0);
  expect(storageAsks.every((ask) => ask.clientId === storageIdentity)).toBe(true);
});

it('exports telemetry to Application Insights signed in with the identity APPLICATIONINSIGHTS_AUTHENTICATION_STRING names', async () => {
  // The batch processor sends within its delay (5 s by default) of the calls above.
  await eventually(
    async () => ingestionAuthorizations.length,
    (count) => count > 0,
    20_000,
  );
  expect(ingestionAuthorizations.length).toBeGreaterThan(0);
  expect(new Set(ingestionAuthorizations)).toEqual(new Set([`Bearer ${monitorToken}`]));
  const monitorAsks = identity.asked.filter((ask) => ask.resource?.startsWith('https://monitor.azure.com'));
  expect(monitorAsks.length).toBeGreaterThan(0);
  expect(monitorAsks.every((ask) => ask.clientId === monitoringIdentity)).toBe(true);
});

it('in Azure with no storage setting, refuses to start naming the settings, and starts no Azurite', async () => {
  const { code, output } = await runAppExpectingFailure({
    WEBSITE_INSTANCE_ID: 'instance-of-this-test',
    MANAGEMENT_BASE_URL: emulator.url,
    LIFECYCLE_BASE_URL: emulator.url,
  });
  expect(code).toBe(1);
  expect(output).toMatch(/No storage is set, and the app runs in Azure \(WEBSITE_INSTANCE_ID is set\)/);
  expect(output).toMatch(/AzureWebJobsStorage__accountName with AzureWebJobsStorage__credential=managedidentity/);
  expect(output).not.toMatch(/Azurite/);
});
