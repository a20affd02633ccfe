/**
 * The official Azure SDK for JS clients against the app over HTTPS (`npm start -- --useHttps`),
 * unchanged but for `endpoint`, in `passthrough` mode (the caller's token reaches the upstream)
 * and in `static` mode (the app's own token). They trust the generated certificate through the
 * pipeline's `tlsOptions` (the PEM the app printed), as NODE_EXTRA_CA_CERTS does for the README
 * example below. The identity platform cannot run here: a TokenCredential stands in for it,
 * returning a token the emulator accepts.
 *
 * The SDKs refuse bearer tokens over plain HTTP (core-rest-pipeline's
 * bearerTokenAuthenticationPolicy), which is why all of this runs over HTTPS.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TokenCredential } from '@azure/core-auth';
import type { FullOperationResponse } from '@azure/core-client';
import { ApiManagementClient } from '@azure/arm-apimanagement';
import { AuthorizationManagementClient } from '@azure/arm-authorization';
import { ContainerInstanceManagementClient, type ContainerGroup } from '@azure/arm-containerinstance';
import { EventHubManagementClient } from '@azure/arm-eventhub';
import { MicrosoftResourceHealth } from '@azure/arm-resourcehealth';
import { request } from 'undici';
import { emulatorToken, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { printedPem, printedPemPath, trustingAgent } from '../helpers/httpsTrust';
import { canaryPrefix } from '../../tools/harness/secretScan';

const subscriptionId = '00000000-0000-0000-0000-000000000000';
/** The caller's own token: what a real credential would get from the identity platform. */
const callerToken = `${canaryPrefix}sdk-caller-token`;
const fastPolling = { ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *', LRO_MIN_POLL_SECONDS: '1', LRO_DEFAULT_POLL_SECONDS: '1' };
const emulatorOptions = { providerNamespace: 'Microsoft', otherTokens: [callerToken], lroSteps: 2, retryAfterSeconds: 1, listItems: 5, pageSize: 2 };

const standInCredential: TokenCredential = {
  getToken: async () => ({ token: callerToken, expiresOnTimestamp: Date.now() + 3600_000 }),
};

const containerGroup = (image: string): ContainerGroup => ({
  location: 'westus',
  osType: 'Linux',
  containers: [{ name: 'web', image, resources: { requests: { cpu: 1, memoryInGB: 1.5 } } }],
});

/** What an SDK call throws, for assertions on its RestError. */
async function rejectionOf(call: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await call;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error('The call succeeded; an error was expected.');
}

/** Collects the URL of every response the SDK read, through its own `onResponse` option. */
function responseLog() {
  const urls: string[] = [];
  const nextLinks: string[] = [];
  return {
    urls,
    nextLinks,
    onResponse: (response: FullOperationResponse) => {
      urls.push(response.request.url);
      const nextLink = (response.parsedBody as { nextLink?: string } | undefined)?.nextLink;
      if (nextLink) nextLinks.push(nextLink);
    },
  };
}

describe.each([
  { mode: 'passthrough', upstreamToken: callerToken },
  { mode: 'static', upstreamToken: emulatorToken },
])('the SDK clients through the app in $mode mode', ({ mode, upstreamToken }) => {
  let gateway: GatewayFixture;
  let appApi: string;
  let clients: {
    containerInstance: ContainerInstanceManagementClient;
    apiManagement: ApiManagementClient;
    eventHub: EventHubManagementClient;
    authorization: AuthorizationManagementClient;
    resourceHealth: MicrosoftResourceHealth;
  };

  beforeAll(async () => {
    gateway = await startGateway({ UPSTREAM_AUTH: mode, PROVIDER_NAMESPACE: 'Microsoft', ...fastPolling }, emulatorOptions, { args: ['--useHttps'] });
    appApi = `${gateway.app.url}/api`;
    const options = { endpoint: appApi, tlsOptions: { ca: printedPem(gateway.app) } };
    clients = {
      containerInstance: new ContainerInstanceManagementClient(standInCredential, subscriptionId, options),
      apiManagement: new ApiManagementClient(standInCredential, subscriptionId, options),
      eventHub: new EventHubManagementClient(standInCredential, subscriptionId, options),
      authorization: new AuthorizationManagementClient(standInCredential, subscriptionId, options),
      resourceHealth: new MicrosoftResourceHealth(standInCredential, subscriptionId, options),
    };
  });
  afterAll(async () => {
    await gateway.stop();
  });
  beforeEach(() => gateway.emulator.reset());
  afterEach(() => {
    // Whatever the SDK sent, the upstream saw only the token of this mode.
    const seen = new Set(gateway.emulator.upstreamRequests().map((seenRequest) => seenRequest.headers.authorization));
    expect([...seen].filter((header) => header !== undefined)).toEqual(seen.size > 0 ? [`Bearer ${upstreamToken}`] : []);
  });

  it('location.listCachedImages gives every page, following nextLink through the app', async () => {
    const log = responseLog();
    const images: string[] = [];
    for await (const image of clients.containerInstance.location.listCachedImages('westus', { onResponse: log.onResponse })) images.push(image.image);
    expect(images).toEqual([0, 1, 2, 3, 4].map((index) => `registry.example/image-${index}:latest`));
    expect(log.nextLinks).toHaveLength(2);
    for (const url of [...log.urls, ...log.nextLinks]) expect(url.startsWith(`${appApi}/subscriptions/`)).toBe(true);
    expect(gateway.emulator.upstreamRequests({ pathIncludes: '/cachedImages' })).toHaveLength(3);
  });

  it('location.listUsage gives the page its API version describes, with a nextLink on the app', async () => {
    // @azure/arm-containerinstance 9.x describes usages (api-version 2023-05-01) without
    // nextLink, so its pager reads one page; the spec's later version pages them. The page
    // still says where the rest is, on the app (curl: gateway-pages=all merges them).
    const log = responseLog();
    const usages: string[] = [];
    for await (const usage of clients.containerInstance.location.listUsage('westus', { onResponse: log.onResponse })) usages.push(usage.id!);
    expect(usages).toEqual(['usage-0', 'usage-1']);
    expect(log.nextLinks).toEqual([
      `${appApi}/subscriptions/${subscriptionId}/providers/Microsoft.ContainerInstance/locations/westus/usages?api-version=2023-05-01&%24skipToken=2`,
    ]);
  });

  it.each([
    ['roleAssignmentSchedules', `subscriptions/${subscriptionId}/resourceGroups/rg`, 'atScope()'],
    ['roleAssignmentScheduleInstances', `subscriptions/${subscriptionId}`, "assignedTo('4f3c2b1a-0000-4000-8000-000000000001')"],
  ] as const)('%s.listForScope with a $filter follows nextLink through the app', async (collection, scope, filter) => {
    const log = responseLog();
    const names: string[] = [];
    for await (const item of clients.authorization[collection].listForScope(scope, { filter, onResponse: log.onResponse })) names.push(item.name!);
    expect(names).toHaveLength(5);
    expect(log.nextLinks).toHaveLength(2);
    for (const nextLink of log.nextLinks) expect(nextLink.startsWith(`${appApi}/${scope}/providers/Microsoft.Authorization/${collection}?`)).toBe(true);
    const upstream = gateway.emulator.upstreamRequests({ pathIncludes: `/${collection}` });
    expect(upstream.map((seen) => seen.query.$filter)).toEqual([filter, filter, filter]);
  });

  it('eventOperations.fetchDetailsByTenantIdAndTrackingId', async () => {
    const event = await clients.resourceHealth.eventOperations.fetchDetailsByTenantIdAndTrackingId('ABCD-123');
    expect(event).toMatchObject({ name: 'ABCD-123', eventType: 'SecurityAdvisory', summary: expect.any(String) });
  });

  it('privateEndpointConnections.createOrUpdate', async () => {
    const connection = await clients.eventHub.privateEndpointConnections.createOrUpdate('rg', 'sdk-namespace', 'pec-1', {
      privateLinkServiceConnectionState: { status: 'Approved', description: 'Approved by the SDK test' },
    });
    expect(connection).toMatchObject({ name: 'pec-1', privateLinkServiceConnectionState: { status: 'Approved' }, provisioningState: 'Creating' });
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
  });

  // core-lro (the SDKs' poller) reads an answer with Location and neither Azure-AsyncOperation
  // nor Operation-Location as "ResourceLocation" mode: it GETs Location until the status is not
  // 202, takes a 2xx as success with that answer's body as the result (no further GET), and a
  // 4xx/5xx as the failure, thrown as a RestError. operations/{id} answers exactly that way.
  it('containerGroups.beginCreateOrUpdateAndWait: the SDK poller follows Location on the app to the resource', async () => {
    const log = responseLog();
    const group = await clients.containerInstance.containerGroups.beginCreateOrUpdateAndWait('rg', 'sdk-group', containerGroup('nginx'), {
      onResponse: log.onResponse,
    });
    expect(group).toMatchObject({ name: 'sdk-group', provisioningState: 'Succeeded' });
    expect(log.urls[0]).toBe(
      `${appApi}/subscriptions/${subscriptionId}/resourceGroups/rg/providers/Microsoft.ContainerInstance/containerGroups/sdk-group?api-version=2023-05-01`,
    );
    expect(log.urls.length).toBeGreaterThan(1);
    for (const url of log.urls.slice(1)) expect(url).toMatch(new RegExp(`^${appApi}/operations/[0-9a-f-]{36}\\?api-version=`));
    expect(gateway.emulator.upstreamRequests({ method: 'PUT' })).toHaveLength(1);
  });

  it('apiManagementService.beginMigrateToStv2AndWait ends with the service the migration answers', async () => {
    const service = await clients.apiManagement.apiManagementService.beginMigrateToStv2AndWait('rg', 'sdk-apim', { parameters: { mode: 'PreserveIp' } });
    expect(service).toMatchObject({ name: 'sdk-apim', platformVersion: 'stv2', provisioningState: 'Succeeded' });
    expect(gateway.emulator.upstreamRequests({ method: 'POST' })).toHaveLength(1);
  });

  it('a start the upstream answers as final at once ends at once, the upstream polling URLs never reaching the SDK', async () => {
    const upstreamOperation = `${gateway.emulator.url}/subscriptions/${subscriptionId}/providers/Microsoft.ContainerInstance/locations/westus/operationResults/done`;
    gateway.emulator.script({
      kind: 'answer',
      method: 'PUT',
      status: 200,
      headers: { location: upstreamOperation, 'azure-asyncoperation': upstreamOperation, 'retry-after': '1' },
      body: { id: 'x', name: 'at-once', properties: { provisioningState: 'Succeeded', containers: [], osType: 'Linux' } },
    });
    const group = await clients.containerInstance.containerGroups.beginCreateOrUpdateAndWait('rg', 'at-once', containerGroup('nginx'));
    expect(group).toMatchObject({ name: 'at-once', provisioningState: 'Succeeded' });
    expect(gateway.emulator.upstreamRequests({ method: 'GET' })).toHaveLength(0);
  });

  it.each([
    ['an event that does not exist', () => clients.resourceHealth.eventOperations.fetchDetailsByTenantIdAndTrackingId('missing-event'), 'NotFound', 404],
    [
      'a migration of a service that does not exist',
      () => clients.apiManagement.apiManagementService.beginMigrateToStv2AndWait('rg', 'missing-apim'),
      'ResourceNotFound',
      404,
    ],
    [
      'a deployment that fails while the poller follows it',
      () => clients.containerInstance.containerGroups.beginCreateOrUpdateAndWait('rg', 'sdk-fails', containerGroup('registry.example/fail:1')),
      'DeploymentFailed',
      400,
    ],
  ])('%s comes back as the SDK’s RestError with the upstream’s code', async (_title, call, code, statusCode) => {
    expect(await rejectionOf(call())).toMatchObject({ name: 'RestError', code, statusCode });
  });

  it('the certificate download (no SDK) answers over HTTPS as the lifecycle service documents it', async () => {
    const agent = trustingAgent(printedPem(gateway.app));
    try {
      const answer = await request(`${appApi}/environmentinfo/v1/rsatdownload/project/1234567/environment/6f1a2b3c-1234-4abc-9def-0123456789ab`, {
        dispatcher: agent,
        headers: { authorization: `Bearer ${callerToken}`, 'x-vendor-version': '2017-09-15', 'content-type': 'application/json' },
      });
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.json()).toMatchObject({ IsSuccess: true, Data: { CertificateThumbprint: expect.stringMatching(/^[0-9A-F]{40}$/) } });
    } finally {
      await agent.close();
    }
  });
});

/** The README's JS example, run as a user would: its own process, trusting the PEM through NODE_EXTRA_CA_CERTS. */
describe('the README example with the JS SDK', () => {
  const repositoryRoot = resolve(__dirname, '..', '..');
  const functionKey = 'readme-example-function-key';
  let gateway: GatewayFixture;
  let folder: string;
  beforeAll(async () => {
    gateway = await startGateway({ PROVIDER_NAMESPACE: 'Microsoft', LOCAL_HOST_KEYS: JSON.stringify({ readme: functionKey }) }, emulatorOptions, {
      args: ['--useHttps'],
    });
    // Under the repository, so that the example's imports resolve from its node_modules.
    folder = mkdtempSync(join(repositoryRoot, 'dist', 'readme-example-'));
  });
  afterAll(async () => {
    rmSync(folder, { recursive: true, force: true });
    await gateway.stop();
  });

  it('lists every cached image through the app, with the function key', async () => {
    const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
    const example = /```js\n(\/\/ list-cached-images\.mjs\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    // Only the identity platform is stood in for: DefaultAzureCredential becomes a class that
    // returns a token without asking it.
    const credentialImport = "import { DefaultAzureCredential } from '@azure/identity';";
    expect(example).toContain(credentialImport);
    const script = example!.replace(
      credentialImport,
      'class DefaultAzureCredential { async getToken() { return { token: process.env.STAND_IN_TOKEN, expiresOnTimestamp: Date.now() + 3600000 }; } }',
    );
    writeFileSync(join(folder, 'list-cached-images.mjs'), script);

    const child = spawn(process.execPath, [join(folder, 'list-cached-images.mjs')], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_EXTRA_CA_CERTS: printedPemPath(gateway.app),
        GATEWAY_URL: `${gateway.app.url}/api`,
        GATEWAY_KEY: functionKey,
        AZURE_SUBSCRIPTION_ID: subscriptionId,
        STAND_IN_TOKEN: callerToken,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
    clearTimeout(timer);
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
    expect(output.trim().split('\n')).toEqual(
      [0, 1, 2, 3, 4].map((index) => `${index % 2 === 0 ? 'Linux' : 'Windows'} registry.example/image-${index}:latest`),
    );
    // The key opened the app on every page and went no further.
    expect(gateway.emulator.upstreamRequests({ pathIncludes: '/cachedImages' })).toHaveLength(3);
    expect(gateway.emulator.upstreamRequests().every((seen) => seen.headers['x-functions-key'] === undefined)).toBe(true);
  });
});
