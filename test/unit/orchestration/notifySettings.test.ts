/** The notification settings as the engine gets them: the allow-list and the bounds per receiver. */
import { ConfigError, parseConfig } from '../../../src/settings/config';
import { defaultOrchestrationSettings } from '../../../src/orchestration/orchestrationEngine';
import { orchestrationSettingsOf } from '../../../src/orchestration/engineSettings';

const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };
const signing = { NOTIFY_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}` };

it('defaults to the engine defaults', () => {
  const settings = orchestrationSettingsOf(parseConfig(minimal));
  expect(settings.originGate).toEqual(defaultOrchestrationSettings.originGate);
  expect(settings.deliveryWaitMs).toBe(defaultOrchestrationSettings.deliveryWaitMs);
  expect(settings.allowedOrigins).toEqual([]);
});

it('hands the engine the allow-list, checked at every delivery, and the bounds per receiver', () => {
  const settings = orchestrationSettingsOf(
    parseConfig({
      ...minimal,
      ...signing,
      NOTIFY_ALLOWED_ORIGINS: '["https://hooks.example.com"]',
      NOTIFY_ORIGIN_CONCURRENCY: '3',
      NOTIFY_CIRCUIT_FAILURES: '5',
      NOTIFY_CIRCUIT_COOLDOWN_SECONDS: '30',
      NOTIFY_RUN_WAIT_MS: '0',
    }),
  );
  expect(settings).toMatchObject({
    allowedOrigins: ['https://hooks.example.com'],
    originGate: { perOriginConcurrency: 3, failuresToOpen: 5, coolDownMs: 30_000 },
    deliveryWaitMs: 0,
  });
});

it.each([
  ['NOTIFY_ORIGIN_CONCURRENCY', '0'],
  ['NOTIFY_CIRCUIT_FAILURES', '1.5'],
  ['NOTIFY_CIRCUIT_COOLDOWN_SECONDS', '-1'],
  ['NOTIFY_RUN_WAIT_MS', '60001'],
])('refuses %s=%s, naming it', (name, value) => {
  expect(() => parseConfig({ ...minimal, [name]: value })).toThrow(ConfigError);
  expect(() => parseConfig({ ...minimal, [name]: value })).toThrow(new RegExp(`${name} `));
});

it('bounds the purges of a run and the removals of expired records apart (ORCHESTRATION_PURGE_BATCH, RECORDS_JANITOR_BATCH)', () => {
  const settings = orchestrationSettingsOf(
    parseConfig({ ...minimal, ORCHESTRATION_PURGE_BATCH: '7', RECORDS_JANITOR_BATCH: '11', ORCHESTRATION_PURGE_REQUEST_MAX: '13' }),
  );
  expect(settings).toMatchObject({ purgeBatch: 7, recordsBatch: 11 });
  expect(defaultOrchestrationSettings).toMatchObject({ purgeBatch: 500, recordsBatch: 500 });
});
