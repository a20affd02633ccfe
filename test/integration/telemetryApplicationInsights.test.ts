/**
 * `APPLICATIONINSIGHTS_CONNECTION_STRING`: the Azure Monitor exporter sends the app's spans and
 * metrics to the connection string's ingestion endpoint, here a receiver on 127.0.0.1 standing
 * in for Application Insights (HTTPS only, as the exporter insists; its `/v2.1/track` takes
 * gzipped JSON envelopes), trusted by the exporting process through NODE_EXTRA_CA_CERTS. The incoming call
 * becomes a request, the upstream attempt a dependency of it, in one operation. The exporter's
 * own usage reports (statsbeat) go to Microsoft, not to the connection string: they are turned
 * off here with its own settings, as an operator may.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createPlainServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { selfSignedCertificate } from '../../tools/localHost/httpsCertificate';
import { runExportScenario } from '../helpers/exportScenario';

interface Envelope {
  name: string;
  iKey?: string;
  tags?: Record<string, string>;
  data?: {
    baseType?: string;
    baseData?: {
      name?: string;
      id?: string;
      responseCode?: string;
      resultCode?: string;
      properties?: Record<string, string>;
      metrics?: { name: string; value: number }[];
    };
  };
}

let server: Server;
const folder = mkdtempSync(join(tmpdir(), 'ai-ingestion-'));
const envelopes: Envelope[] = [];
const paths: string[] = [];
const instrumentationKey = '00000000-0000-4000-8000-0000000000aa';

beforeAll(async () => {
  const { certPem, keyPem } = selfSignedCertificate(new Date());
  writeFileSync(join(folder, 'ca.pem'), certPem);
  server = createServer({ cert: certPem, key: keyPem }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(request.url ?? '');
      const raw = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      const parsed = JSON.parse(text) as Envelope | Envelope[];
      envelopes.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ itemsReceived: envelopes.length, itemsAccepted: envelopes.length, errors: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await runExportScenario(
    {
      applicationInsights: { connectionString: `InstrumentationKey=${instrumentationKey};IngestionEndpoint=${endpoint}` },
      serviceName: 'ai-test',
      serviceVersion: '0.0.0',
      samplingRatio: 1,
      metricIntervalMs: 60_000,
    },
    `await running.instrumentation.traceIncoming('ContainerGroups_CreateOrUpdate', async () => {
      await running.instrumentation.traceUpstreamAttempt({ method: 'PUT', origin: 'https://management.azure.com', path: '/subscriptions/s/x?api-version=2025-09-01', attempt: 0, waitedMs: 0 }, {}, async () => ({ status: 201, headers: { 'x-ms-request-id': 'req-1' } }));
      return { status: 201 };
    })({ method: 'PUT', url: 'http://127.0.0.1/api/x', headers: new Headers() }, {});`,
    { APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true', APPLICATIONINSIGHTS_SDKSTATS_DISABLED: 'true', NODE_EXTRA_CA_CERTS: join(folder, 'ca.pem') },
  );
}, 90_000);
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(folder, { recursive: true, force: true });
});

it('sends the call as a request and the upstream attempt as its dependency, in one operation', () => {
  expect(paths.every((path) => path === '/v2.1/track')).toBe(true);
  const request = envelopes.find((envelope) => envelope.data?.baseType === 'RequestData');
  const dependency = envelopes.find((envelope) => envelope.data?.baseType === 'RemoteDependencyData');
  expect(request).toMatchObject({ iKey: instrumentationKey, data: { baseData: { name: 'PUT ContainerGroups_CreateOrUpdate', responseCode: '201' } } });
  expect(request?.tags?.['ai.cloud.role']).toBe('ai-test');
  expect(dependency?.data?.baseData).toMatchObject({ resultCode: '201' });
  expect(dependency?.data?.baseData?.properties?.['az.service_request_id']).toBe('req-1');
  expect(dependency?.tags?.['ai.operation.id']).toBe(request?.tags?.['ai.operation.id']);
  expect(dependency?.tags?.['ai.operation.parentId']).toBe(request?.data?.baseData?.id);
});

it('sends the metrics', () => {
  const metricNames = envelopes
    .filter((envelope) => envelope.data?.baseType === 'MetricData')
    .flatMap((envelope) => envelope.data?.baseData?.metrics?.map((metric) => metric.name) ?? []);
  expect(metricNames).toContain('gateway.upstream.calls');
});

it('stops cleanly when the ingestion endpoint does not answer as one (what was buffered is lost, the process is not)', async () => {
  // Plain HTTP where the exporter speaks TLS: its last send fails as the export stops.
  const plain = createPlainServer((_request, response) => response.end());
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  try {
    await runExportScenario(
      {
        applicationInsights: {
          connectionString: `InstrumentationKey=${instrumentationKey};IngestionEndpoint=https://127.0.0.1:${(plain.address() as AddressInfo).port}/`,
        },
        serviceName: 'ai-test',
        serviceVersion: '0.0.0',
        samplingRatio: 1,
        metricIntervalMs: 60_000,
      },
      `await call('unanswered', { status: 200 });`,
      { APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true', APPLICATIONINSIGHTS_SDKSTATS_DISABLED: 'true' },
    );
  } finally {
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  }
}, 90_000);
