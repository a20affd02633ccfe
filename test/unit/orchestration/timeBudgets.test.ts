/**
 * The engine's and the waits' times follow the budgets they depend on: a start is judged
 * interrupted only once it cannot still be waiting for its upstream, and a wait ends early
 * enough for its last storage reads to finish before the Azure front end cuts the request.
 */
import { parseConfig } from '../../../src/settings/config';
import { longestWaitSeconds } from '../../../src/calls/gatewayWait';
import { defaultOrchestrationSettings } from '../../../src/orchestration/orchestrationEngine';
import { orchestrationSettingsOf } from '../../../src/orchestration/engineSettings';

const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };

it('a start is judged interrupted only after its writes and its upstream call could have ended', () => {
  expect(orchestrationSettingsOf(parseConfig(minimal)).pendingTimeoutMs).toBe(defaultOrchestrationSettings.pendingTimeoutMs);
  const slow = parseConfig({ ...minimal, UPSTREAM_TIMEOUT_MS: '600000', STORAGE_TIMEOUT_MS: '60000' });
  expect(orchestrationSettingsOf(slow).pendingTimeoutMs).toBeGreaterThan(600_000 + 3 * 60_000);
  // Each try of recording the upstream's answer has its own storage budget.
  const retrying = parseConfig({ ...minimal, UPSTREAM_TIMEOUT_MS: '600000', STORAGE_TIMEOUT_MS: '60000', ORCHESTRATION_START_RECORD_ATTEMPTS: '10' });
  expect(orchestrationSettingsOf(retrying).pendingTimeoutMs).toBeGreaterThan(600_000 + (2 + 10) * 60_000);
  expect(orchestrationSettingsOf(retrying).startRecordAttempts).toBe(10);
});

it("a wait leaves room for two storage reads before the front end's 230 s", () => {
  expect(longestWaitSeconds(parseConfig(minimal))).toBe(200);
  expect(longestWaitSeconds(parseConfig({ ...minimal, GATEWAY_WAIT_MAX_SECONDS: '220' }))).toBe(210);
  expect(longestWaitSeconds(parseConfig({ ...minimal, GATEWAY_WAIT_MAX_SECONDS: '220', STORAGE_TIMEOUT_MS: '60000' }))).toBe(110);
  expect(longestWaitSeconds(parseConfig({ ...minimal, STORAGE_TIMEOUT_MS: '120000' }))).toBe(1);
});

it('takes the recovery times from the settings, never shortening the wait for a cut start below what the start could still take', () => {
  const quick = orchestrationSettingsOf(
    parseConfig({
      ...minimal,
      ORCHESTRATION_CLAIM_SECONDS: '5',
      ORCHESTRATION_INTERRUPTED_AFTER_SECONDS: '1',
      UPSTREAM_TIMEOUT_MS: '1000',
      STORAGE_TIMEOUT_MS: '500',
    }),
  );
  expect(quick.claimMs).toBe(5000);
  // The start's upstream call (1 s) and its writes (2 + 3 tries of 0.5 s) and a minute for clocks that differ.
  expect(quick.pendingTimeoutMs).toBe(1000 + 5 * 500 + 60_000);
  const patient = orchestrationSettingsOf(parseConfig({ ...minimal, ORCHESTRATION_INTERRUPTED_AFTER_SECONDS: '7200' }));
  expect(patient.pendingTimeoutMs).toBe(7_200_000);
});
