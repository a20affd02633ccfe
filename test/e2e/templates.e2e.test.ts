/** Templates, OpenAPI and health through the app over HTTP. */
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

let gateway: GatewayFixture;
beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway.stop();
});

async function post(path: string, body: unknown) {
  const response = await request(gateway.api(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
}

it('validates an API template and names each problem', async () => {
  const template = {
    resources: [
      {
        type: 'Vendor.ApiManagement/service/apis',
        apiVersion: '2016-10-10',
        name: 'apim/echo',
        properties: { path: 'echo', protocols: ['Https'], serviceUrl: 'relative/path' },
      },
    ],
  };
  const answer = await post('templates/apis/validate', template);
  expect(answer).toEqual({
    status: 200,
    json: { valid: false, checked: 1, errorCount: 1, errors: [expect.objectContaining({ path: 'resources[0].properties.serviceUrl', code: 'InvalidUrl' })] },
  });
  expect((await post('templates/galleryImageVersions/validate', '{"name": ')).status).toBe(400);
  // The app's own routes leave the same call record as the documented operations.
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(gateway.app.callRecords()).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ operation: 'templates-apis-validate', target: '/api/templates/apis/validate', status: 200 }),
      expect.objectContaining({ operation: 'templates-galleryImageVersions-validate', status: 400, errorCode: 'InvalidJson' }),
    ]),
  );
});

it('builds the complete gateway properties with the configured prefix, refusing required ciphers', async () => {
  const built = await post('templates/gatewayCustomProperties/build', { clientProtocols: { tls10: false } });
  expect(built.status).toBe(200);
  expect(Object.keys(built.json.customProperties as object).every((key) => key.startsWith('Vendor.WindowsAzure.ApiManagement.Gateway.'))).toBe(true);
  const refused = await post('templates/gatewayCustomProperties/build', { ciphers: { TLS_AES_128_GCM_SHA256: false } });
  expect(refused.status).toBe(400);
  expect(refused.json).toMatchObject({ error: { details: [{ code: 'CipherRequired', target: 'ciphers.TLS_AES_128_GCM_SHA256' }] } });
});

it('serves openapi.json', async () => {
  const response = await request(gateway.api('openapi.json'));
  expect(response.statusCode).toBe(200);
  const document = (await response.body.json()) as { openapi: string; paths: Record<string, unknown> };
  expect(document.openapi).toBe('3.1.0');
  expect(Object.keys(document.paths)).toContain('/subscriptions/{subscriptionId}/providers/Vendor.ContainerInstance/locations/{location}/usages');
});

describe('health', () => {
  let degraded: AppProcess;
  afterAll(async () => {
    await degraded?.stop();
  });

  it('reports the version and each dependency, and 503 when one does not answer', async () => {
    const healthy = await request(gateway.api('health'));
    expect(healthy.statusCode).toBe(200);
    expect(await healthy.body.json()).toMatchObject({
      status: 'Healthy',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      dependencies: { storage: { ok: true }, management: { ok: true }, lifecycle: { ok: true } },
    });

    degraded = await startApp({ ...gateway.env, LIFECYCLE_BASE_URL: 'http://127.0.0.1:9', UPSTREAM_TIMEOUT_MS: '1000' });
    gateway.others.push(degraded);
    const answer = await request(`${degraded.url}/api/health`);
    expect(answer.statusCode).toBe(503);
    expect(await answer.body.json()).toMatchObject({ status: 'Degraded', dependencies: { lifecycle: { ok: false }, management: { ok: true } } });
  });
});
