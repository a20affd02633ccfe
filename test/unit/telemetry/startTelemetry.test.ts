/**
 * Without an exporter setting nothing of the SDK is loaded and every hook passes its work
 * through untouched; the exporter settings read as documented.
 */
import { parseConfig, resetConfigForTests } from '../../../src/settings/config';
import * as sdkOnFirstUse from '../../../src/telemetry/sdkOnFirstUse';
import { currentTraceCarrier, traceStorage, traceUpstreamAttempt } from '../../../src/telemetry/hooks';
import { exportSettingsOf, instrumentation, startTelemetry } from '../../../src/telemetry/telemetry';

const required = { MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' };
const saved = { ...process.env };

afterEach(() => {
  jest.restoreAllMocks();
  process.env = { ...saved };
  resetConfigForTests();
});

it('loads nothing and passes work through untouched when no exporter is set', async () => {
  const sdk = jest.spyOn(sdkOnFirstUse, 'telemetrySdkPackage');
  startTelemetry({ ...required, OTEL_SERVICE_NAME: 'named-but-not-exported', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k' });
  expect(sdk).not.toHaveBeenCalled();
  expect(instrumentation()).toBeUndefined();
  const headers = { accept: 'application/json' };
  const sent: Record<string, string>[] = [];
  await traceUpstreamAttempt({ method: 'GET', origin: 'https://h', path: '/p', attempt: 0, waitedMs: 0 }, headers, async (given) => {
    sent.push(given);
    return { status: 200, headers: {} };
  });
  expect(sent).toEqual([headers]);
  expect(await traceStorage('Orchestration storage', 'read', async () => 'read')).toBe('read');
  expect(currentTraceCarrier()).toBeUndefined();
});

it('starts nothing when an exporter is set beside an invalid setting (the first call reports the setting)', () => {
  const sdk = jest.spyOn(sdkOnFirstUse, 'telemetrySdkPackage');
  process.env = { ...saved, ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
  resetConfigForTests();
  startTelemetry();
  expect(sdk).not.toHaveBeenCalled();
  expect(instrumentation()).toBeUndefined();
});

it('reads the exporter settings, with their defaults', () => {
  expect(exportSettingsOf(parseConfig(required))).toBeUndefined();
  expect(exportSettingsOf(parseConfig({ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.com:4318' }))).toMatchObject({
    otlp: { protocol: 'http/protobuf' },
    applicationInsights: undefined,
    serviceName: 'management-gateway',
    samplingRatio: 1,
    metricIntervalMs: 60_000,
  });
  const both = exportSettingsOf(
    parseConfig({
      ...required,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=k;IngestionEndpoint=https://i.example.com/',
      TELEMETRY_SAMPLING_RATIO: '0.25',
    }),
  );
  expect(both).toMatchObject({
    otlp: { protocol: 'http/json' },
    applicationInsights: { connectionString: 'InstrumentationKey=k;IngestionEndpoint=https://i.example.com/' },
    samplingRatio: 0.25,
  });
});

it('refuses an exporter setting it cannot use, naming what it takes', () => {
  expect(() => parseConfig({ ...required, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL.*http\/protobuf or http\/json/);
  expect(() => parseConfig({ ...required, TELEMETRY_SAMPLING_RATIO: '1.5' })).toThrow(/TELEMETRY_SAMPLING_RATIO/);
  expect(() => parseConfig({ ...required, APPLICATIONINSIGHTS_CONNECTION_STRING: 'not-a-connection-string' })).toThrow(/APPLICATIONINSIGHTS_CONNECTION_STRING/);
});
