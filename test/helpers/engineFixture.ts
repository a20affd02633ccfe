/**
 * The engine against the emulator and Azurite over loopback, for the tests of its parts: one
 * emulator and Azurite per test file, a fresh container per test, storage requests counted
 * (countingStorage.ts), and a clock the test moves (`fixture.clock`).
 */
import { randomUUID } from 'node:crypto';
import {
  defaultOrchestrationSettings,
  engineOnContainer,
  type EngineDependencies,
  type OrchestrationEngine,
  type OrchestrationSettings,
  type StartRequest,
} from '../../src/orchestration/orchestrationEngine';
import { Approvals } from '../../src/approvals/approvals';
import { approvalHolds } from '../../src/approvals/approvalTransitions';
import { ApprovalWaits } from '../../src/approvals/approvalWaits';
import { deliveriesOf } from '../../src/notifications/notificationDispatcher';
import { StorageBudget } from '../../src/storage/storageBudget';
import type { UpstreamResponse } from '../../src/upstream/upstreamClient';
import { UpstreamClient } from '../../src/upstream/upstreamClient';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { startEmulator, type Emulator } from '../../tools/emulator/emulatorServer';
import { countingStorage, type CountingStorage } from '../../tools/harness/countingStorage';

export const token = 'emulator-token';
const subscription = '00000000-0000-0000-0000-000000000000';
export const retentionMs = 3600_000;

export interface EngineFixture {
  emulator: Emulator;
  azurite: RunningAzurite;
  storage: CountingStorage;
  clock: number;
  container: string;
}

/** The fixture of one test file: started before its tests, a new container before each. */
export function useEngineFixture(): EngineFixture {
  const fixture = { clock: Date.parse('2026-06-01T00:00:00Z') } as EngineFixture;
  beforeAll(async () => {
    fixture.emulator = await startEmulator({ token, lroSteps: 2, retryAfterSeconds: 1 });
    fixture.azurite = await startAzurite();
    fixture.storage = countingStorage(fixture.azurite.connectionString);
  });
  afterAll(async () => {
    await fixture.emulator.close();
    await fixture.azurite.close();
  });
  beforeEach(() => {
    fixture.emulator.reset();
    fixture.container = `i${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  });
  return fixture;
}

export const upstreamOf = (fixture: EngineFixture) =>
  new UpstreamClient({ baseUrl: fixture.emulator.url, timeoutMs: 2000, retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });

export function makeEngine(
  fixture: EngineFixture,
  now: () => number = () => fixture.clock,
  settings: Partial<OrchestrationSettings> = {},
  parts: Pick<EngineDependencies, 'holds' | 'deliveries'> = {},
  storage: CountingStorage = fixture.storage,
): OrchestrationEngine {
  return engineOnContainer(storage.service.getContainerClient(fixture.container), {
    // As the app's: deliveries made, each given up with no signing secret to sign it.
    deliveries: deliveriesOf({}),
    ...parts,
    storageTimeoutMs: 5000,
    upstream: upstreamOf(fixture),
    settings: {
      ...defaultOrchestrationSettings,
      pollInterval: { defaultMs: 5000, floorMs: 1000, ceilingMs: 60_000 },
      deadlineMs: {},
      defaultDeadlineMs: 10 * 60_000,
      retentionMs,
      ...settings,
    },
    now,
    log: () => undefined,
  });
}

/** An engine that holds starts for approval as the app's does (src/approvals), with the approvals on it. */
export function makeApprovalEngine(
  fixture: EngineFixture,
  now: () => number = () => fixture.clock,
  storage: CountingStorage = fixture.storage,
): ApprovalEngine {
  const waits = new ApprovalWaits(storage.service.getContainerClient(fixture.container), new StorageBudget(5000, 'Orchestration storage'));
  const engine = makeEngine(fixture, now, {}, { holds: approvalHolds(waits) }, storage);
  return Object.assign(engine, { approvals: new Approvals(engine, waits, now) });
}

export type ApprovalEngine = OrchestrationEngine & { approvals: Approvals };

export function groupStart(fixture: EngineFixture, name: string): StartRequest {
  const path = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}`;
  const body = { location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } };
  return {
    name: 'ContainerGroups_CreateOrUpdate',
    method: 'PUT',
    path,
    query: [['api-version', '2025-09-01']],
    bodyText: JSON.stringify(body),
    bodyValue: body,
    resourceUrl: `${fixture.emulator.url}/${path}?api-version=2025-09-01`,
  };
}

export const sendFor = (fixture: EngineFixture, start: StartRequest) => () =>
  upstreamOf(fixture).send({ method: start.method, url: start.resourceUrl, token, body: start.bodyText, headers: { 'content-type': 'application/json' } });

/** An upstream that finished at once: the orchestration ends with the start. */
export const finishedAtOnce = async (): Promise<UpstreamResponse> => ({
  status: 200,
  headers: {},
  bodyText: '{"properties":{"provisioningState":"Succeeded"}}',
  attempts: 1,
});

export async function endedOrchestrations(fixture: EngineFixture, engine: OrchestrationEngine, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let batch = 0; batch < count; batch += 20) {
    const outcomes = await Promise.all(
      Array.from({ length: Math.min(20, count - batch) }, (_, index) =>
        engine.start(groupStart(fixture, `done-${batch + index}-${randomUUID().slice(0, 6)}`), finishedAtOnce),
      ),
    );
    ids.push(...outcomes.map((outcome) => outcome.state.id));
  }
  return ids;
}

export async function blobNames(fixture: EngineFixture, prefix = ''): Promise<string[]> {
  const names: string[] = [];
  for await (const blob of fixture.storage.service.getContainerClient(fixture.container).listBlobsFlat({ prefix })) names.push(blob.name);
  return names;
}
