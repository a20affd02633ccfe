/**
 * Starts that wait for approval, on the engine against the emulator and Azurite with a clock the
 * test moves: nothing is sent while one waits; approved, it is sent exactly once, whoever races
 * to send it (two approvals, two engines, the poller); an approved start an instance stopped
 * before sending is carried on by a later poller run; rejected or expired, it ends NotApproved
 * with no upstream call; the stale-start rule leaves waiting and approved starts alone; the
 * bounds on waiting starts refuse with nothing stored.
 */
import { randomUUID } from 'node:crypto';
import { AccessPolicy, type Caller } from '../../src/access/accessPolicy';
import { decideApproval } from '../../src/approvals/approvalDecisions';
import { GatewayError } from '../../src/errors';
import type { ApprovalStatus } from '../../src/orchestration/approvalStatus';
import { waitingApproval } from '../../src/approvals/approvalTransitions';
import type { StartRequest } from '../../src/orchestration/orchestrationEngine';
import type { OrchestrationState } from '../../src/orchestration/orchestrationState';
import type { Services } from '../../src/services';
import { countingStorage } from '../../tools/harness/countingStorage';
import { blobNames, groupStart, makeApprovalEngine, token, useEngineFixture, type ApprovalEngine, type EngineFixture } from '../helpers/engineFixture';

const fixture = useEngineFixture();
const minute = 60_000;
const bounds = { perCaller: 3, total: 5 };

function heldOf(start: StartRequest): NonNullable<OrchestrationState['heldStart']> {
  return { url: start.resourceUrl, headers: { 'content-type': 'application/json' }, bodyText: start.bodyText };
}

const callerNamed = (primary: string): Caller => ({ primary, selectors: [primary] });

async function hold(
  engine: ApprovalEngine,
  options: { required?: number; startedBy?: string; starter?: Caller; approvers?: string[]; minutes?: number; name?: string } = {},
): Promise<OrchestrationState> {
  const starter = options.starter ?? callerNamed(options.startedBy ?? 'key:starter00001');
  const start = { ...groupStart(fixture, options.name ?? `held-${randomUUID().slice(0, 8)}`), startedBy: starter.primary, duplicatesPerCaller: true };
  const approval: ApprovalStatus = waitingApproval(
    options.required ?? 1,
    options.approvers ?? ['role:Approver'],
    fixture.clock + (options.minutes ?? 60) * minute,
    starter,
  );
  const outcome = await engine.approvals.hold(start, heldOf(start), approval, bounds);
  expect(outcome.kind).toBe('waiting');
  return outcome.state;
}

const putsUpstream = (f: EngineFixture) => f.emulator.upstreamRequests({ method: 'PUT' });
const approve = (engine: ApprovalEngine, id: string, by: string) => engine.approvals.decide(id, { by, approved: true, route: 'api' }, () => undefined);

it('stores a waiting start with nothing sent, and sends it once when approved', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine);
  expect(state.runtimeStatus).toBe('Pending');
  expect(state.customStatus?.approval).toMatchObject({ state: 'waiting', required: 1, approvers: ['role:Approver'], decisions: [] });
  await engine.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(0);

  const approved = await approve(engine, state.id, 'key:approver0001');
  expect(approved.customStatus?.approval?.state).toBe('approved');
  expect(putsUpstream(fixture)).toHaveLength(0);
  await engine.sweep(token);
  await engine.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(1);
  const running = await engine.get(state.id);
  expect(running?.runtimeStatus).toBe('Running');
  expect(running?.initial?.status).toBe(201);
  // Its waiting place was given back.
  expect(await blobNames(fixture, 'approvals/')).toEqual([]);
});

it('sends exactly once when two engines race to send an approved start (two approvals, count 2)', async () => {
  const [first, second] = [makeApprovalEngine(fixture), makeApprovalEngine(fixture)];
  const state = await hold(first, { required: 2 });
  await Promise.all([approve(first, state.id, 'key:approver0001'), approve(second, state.id, 'key:approver0002')]);
  expect((await first.get(state.id))?.customStatus?.approval?.decisions).toHaveLength(2);
  await Promise.all([first.sweep(token), second.sweep(token), first.advance(state.id, { token }), second.advance(state.id, { token })]);
  expect(putsUpstream(fixture)).toHaveLength(1);
});

it('records one of two racing approvals of count 1 and refuses the other as no longer waiting', async () => {
  const [first, second] = [makeApprovalEngine(fixture), makeApprovalEngine(fixture)];
  const state = await hold(first);
  const judge = (current: OrchestrationState) => {
    if (current.customStatus?.approval?.state !== 'waiting') throw new GatewayError('Conflict', 'no longer waits');
  };
  const results = await Promise.allSettled([
    first.approvals.decide(state.id, { by: 'key:approver0001', approved: true, route: 'api' }, judge),
    second.approvals.decide(state.id, { by: 'key:approver0002', approved: true, route: 'api' }, judge),
  ]);
  expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  expect(results.filter((result) => result.status === 'rejected').map((result) => ((result as PromiseRejectedResult).reason as GatewayError).code)).toEqual([
    'Conflict',
  ]);
  await Promise.all([first.sweep(token), second.sweep(token)]);
  expect(putsUpstream(fixture)).toHaveLength(1);
});

it('carries on an approved start whose instance stopped before sending: a later poller run sends it once', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine);
  // What an instance that stopped right after recording the approval leaves: the document
  // approved and its key due, no send claimed, nothing upstream.
  await approve(engine, state.id, 'key:approver0001');
  const stopped = await engine.get(state.id);
  expect(stopped?.heldStart?.sendingSince).toBeUndefined();
  expect(putsUpstream(fixture)).toHaveLength(0);
  // A new instance (no cache), well past the stale-start timeout: sent, not failed.
  fixture.clock += 30 * minute;
  const later = makeApprovalEngine(fixture);
  await later.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(1);
  expect((await later.get(state.id))?.runtimeStatus).toBe('Running');
  await later.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(1);
});

it('sends an approval whose instance stopped after its document write, even when a poller run set its key back while that write was on its way', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine);
  // The deciding instance: its document write is held until the poller has run, and it stops
  // (its later storage requests never answer) right after that write lands.
  let releaseWrite: () => void = () => undefined;
  const writeHeld = new Promise<void>((resolve) => (releaseWrite = resolve));
  let written = false;
  let revive: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (revive = resolve));
  const deciding = countingStorage(fixture.azurite.connectionString, (line) => {
    if (line.endsWith(`instances/${state.id}.json`) && line.startsWith('PUT')) {
      written = true;
      return writeHeld;
    }
    return written && line.includes('keys/') ? stopped : 0;
  });
  const decider = makeApprovalEngine(fixture, () => fixture.clock, deciding);
  void decider.approvals.decide(state.id, { by: 'key:approver0001', approved: true, route: 'api' }, () => undefined).catch(() => undefined);
  for (let tries = 0; !written && tries < 200; tries += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(written).toBe(true);
  // Meanwhile a poller run finds the key due, reads the document still waiting, and sets the key back.
  await makeApprovalEngine(fixture).sweep(token);
  releaseWrite();
  for (let tries = 0; (await engine.get(state.id))?.customStatus?.approval?.state !== 'approved' && tries < 200; tries += 1)
    await new Promise((resolve) => setTimeout(resolve, 25));
  expect((await engine.get(state.id))?.customStatus?.approval?.state).toBe('approved');
  // Within the change's window (six storage budgets of 5 s here), a later run sends it, once.
  fixture.clock += 31_000;
  const later = makeApprovalEngine(fixture);
  await later.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(1);
  await later.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(1);
  revive();
});

it('leaves waiting starts to their expiry, past the stale-start timeout, then ends them NotApproved with no upstream call', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine, { minutes: 45 });
  fixture.clock += 30 * minute;
  await engine.sweep(undefined);
  await engine.sweep(token);
  // A caller's read steps it too (passthrough mode, gateway-wait): still not stale.
  await engine.advance(state.id, { token });
  expect((await engine.get(state.id))?.runtimeStatus).toBe('Pending');
  fixture.clock += 16 * minute;
  // Without a token, as in passthrough mode: an expiry needs no upstream call.
  await engine.sweep(undefined);
  const ended = await engine.get(state.id);
  expect(ended).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' } });
  expect(ended?.failure?.message).toMatch(/expired/);
  expect(ended?.customStatus?.approval?.state).toBe('expired');
  expect(putsUpstream(fixture)).toHaveLength(0);
  expect(await blobNames(fixture, 'keys/')).toEqual([]);
  expect(await blobNames(fixture, 'approvals/')).toEqual([]);
});

it('ends a rejected start at once, naming who rejected it and why, with no upstream call', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine, { required: 2 });
  await approve(engine, state.id, 'key:approver0001');
  const rejected = await engine.approvals.decide(
    state.id,
    { by: 'key:approver0002', approved: false, reason: 'not this week', route: 'chat-command' },
    () => undefined,
  );
  expect(rejected).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' } });
  expect(rejected.failure?.message).toContain('key:approver0002');
  expect(rejected.failure?.message).toContain('not this week');
  expect(rejected.customStatus?.approval?.decisions.map((decision) => [decision.by, decision.approved, decision.route])).toEqual([
    ['key:approver0001', true, 'api'],
    ['key:approver0002', false, 'chat-command'],
  ]);
  expect(rejected.deliveries).toBeDefined();
  await engine.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(0);
});

it('fails a start whose send was claimed but never recorded by the stale-start rule (the ambiguous case)', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine);
  await approve(engine, state.id, 'key:approver0001');
  // A send claimed, then the instance stopped: whether the upstream got it is unknown.
  const stored = (await engine.store.read(state.id))!;
  await engine.store.replace({ ...stored.state, heldStart: { ...stored.state.heldStart!, sendingSince: fixture.clock } }, stored.etag);
  await makeApprovalEngine(fixture).sweep(token);
  expect((await engine.get(state.id))?.runtimeStatus).toBe('Pending');
  fixture.clock += 11 * minute;
  await makeApprovalEngine(fixture).sweep(token);
  expect(await engine.get(state.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'StartInterrupted' } });
  expect(putsUpstream(fixture)).toHaveLength(0);
});

it('joins a repeat of a waiting start instead of storing a second one', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine, { name: 'repeated' });
  const start = { ...groupStart(fixture, 'repeated'), startedBy: 'key:starter00001', duplicatesPerCaller: true };
  const again = await engine.approvals.hold(
    start,
    heldOf(start),
    waitingApproval(1, ['role:Approver'], fixture.clock + 60 * minute, callerNamed('key:starter00001')),
    bounds,
  );
  expect(again).toMatchObject({ kind: 'duplicate', state: { id: state.id } });
  expect(await blobNames(fixture, 'approvals/')).toHaveLength(1);
});

it('refuses a start past the bounds on waiting starts with 429 and Retry-After, storing nothing', async () => {
  const engine = makeApprovalEngine(fixture);
  for (let index = 0; index < bounds.perCaller; index += 1) await hold(engine, { startedBy: 'key:busy00000001', minutes: 10 + index });
  const before = await blobNames(fixture);
  const refusal = await hold(engine, { startedBy: 'key:busy00000001' }).catch((error: unknown) => error as GatewayError);
  expect(refusal).toMatchObject({ code: 'TooManyPendingApprovals', status: 429 });
  // The earliest of the caller's waiting starts frees its place in 10 minutes.
  expect((refusal as GatewayError).headers?.['retry-after']).toBe('600');
  expect(await blobNames(fixture)).toEqual(before);
  // Another caller still has room, up to the app's bound.
  await hold(engine, { startedBy: 'key:other0000001' });
  await hold(engine, { startedBy: 'key:other0000001' });
  const overall = await hold(engine, { startedBy: 'key:third0000001' }).catch((error: unknown) => error as GatewayError);
  expect(overall).toMatchObject({ code: 'TooManyPendingApprovals' });
  expect((overall as GatewayError).message).toMatch(/APPROVAL_MAX_PENDING\)/);
});

it('ends a waiting start on terminate, with no upstream call and its place given back', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine);
  const terminated = await engine.terminate(state.id, 'not needed');
  expect(terminated.runtimeStatus).toBe('Terminated');
  await engine.sweep(token);
  expect(putsUpstream(fixture)).toHaveLength(0);
  expect(await blobNames(fixture, 'approvals/')).toEqual([]);
});

it('ends a waiting start whose request key a stopped instance never wrote once it expired (the janitor finds it)', async () => {
  const engine = makeApprovalEngine(fixture);
  const state = await hold(engine, { minutes: 5 });
  const container = fixture.storage.service.getContainerClient(fixture.container);
  for (const name of await blobNames(fixture, 'keys/')) await container.deleteBlob(name);
  fixture.clock += 6 * minute;
  await makeApprovalEngine(fixture).sweep(token);
  expect(await engine.get(state.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' } });
  expect(putsUpstream(fixture)).toHaveLength(0);
});

describe('decisions judged as the app judges them (every name of a caller, the clock)', () => {
  const tenant = '11111111-2222-3333-4444-555555555555';
  const starterOid = 'aaaaaaaa-0000-0000-0000-000000000001';
  const approverOid = 'bbbbbbbb-0000-0000-0000-000000000002';
  // The starter calls with its principal and a key that a rule also names as an approver.
  const starter: Caller = { primary: `principal:${starterOid}`, selectors: [`principal:${starterOid}`, 'key:5a5a5a5a5a5a', 'role:Operator'] };
  const approverByKeyAndPrincipal: Caller = { primary: `principal:${approverOid}`, selectors: [`principal:${approverOid}`, 'key:b0b0b0b0b0b0'] };
  const approvers = ['key:5a5a5a5a5a5a', 'key:b0b0b0b0b0b0', 'key:c0c0c0c0c0c0', `teams:${tenant}/${starterOid}`, `teams:${tenant}/${approverOid}`];
  // Judged with the test's clock and a real policy; the engine under it is the fixture's (passthrough: no send at once).
  const servicesOf = (engine: ApprovalEngine) =>
    ({
      orchestrations: engine,
      approvals: engine.approvals,
      access: { policy: new AccessPolicy([]) },
      tokens: { mode: 'passthrough' },
      now: () => fixture.clock,
    }) as unknown as Services;
  const decideAs = (engine: ApprovalEngine, caller: Caller, id: string) =>
    decideApproval(servicesOf(engine), caller, id, { approved: true, route: 'api' }).catch((error: unknown) => error as GatewayError);
  const teamsUser = (oid: string): Caller => callerNamed(`teams:${tenant}/${oid.toUpperCase()}`.toLowerCase());

  beforeEach(() => jest.spyOn(console, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('refuses the starter under any of its names: its key alone, or its object id in Teams', async () => {
    const engine = makeApprovalEngine(fixture);
    const state = await hold(engine, { starter, approvers });
    expect(state.customStatus?.approval?.starter).toEqual([`principal:${starterOid}`, 'key:5a5a5a5a5a5a']);
    for (const caller of [callerNamed('key:5A5A5A5A5A5A'), teamsUser(starterOid)]) {
      expect(await decideAs(engine, caller, state.id)).toMatchObject({
        code: 'ApprovalNotAllowed',
        status: 403,
        message: expect.stringMatching(/started orchestration .*under this or another of its names/),
      });
    }
    expect((await engine.get(state.id))?.customStatus?.approval?.decisions).toEqual([]);
    await engine.sweep(token);
    expect(putsUpstream(fixture)).toHaveLength(0);
  });

  it('counts one caller once under two names, and records every name of each decision', async () => {
    const engine = makeApprovalEngine(fixture);
    const state = await hold(engine, { starter, approvers, required: 2 });
    const first = await decideAs(engine, approverByKeyAndPrincipal, state.id);
    expect((first as OrchestrationState).customStatus?.approval?.decisions[0]).toMatchObject({
      by: `principal:${approverOid}`,
      identities: [`principal:${approverOid}`, 'key:b0b0b0b0b0b0'],
    });
    for (const caller of [callerNamed('key:b0b0b0b0b0b0'), teamsUser(approverOid)]) {
      expect(await decideAs(engine, caller, state.id)).toMatchObject({
        code: 'Conflict',
        status: 409,
        message: expect.stringMatching(/decided orchestration .* already, as principal:/),
      });
    }
    expect((await engine.get(state.id))?.customStatus?.approval).toMatchObject({ state: 'waiting', decisions: [{ by: `principal:${approverOid}` }] });
    const approved = await decideAs(engine, callerNamed('key:c0c0c0c0c0c0'), state.id);
    expect((approved as OrchestrationState).customStatus?.approval?.state).toBe('approved');
  });

  it('refuses an approval at or after the expiry with 410 ApprovalExpired, and sends nothing', async () => {
    const engine = makeApprovalEngine(fixture);
    const state = await hold(engine, { starter, approvers, minutes: 5 });
    fixture.clock += 5 * minute;
    const refusal = await decideAs(engine, approverByKeyAndPrincipal, state.id);
    expect(refusal).toMatchObject({ code: 'ApprovalExpired', status: 410, message: expect.stringMatching(/expired at 2026-.*Start it again/) });
    await engine.sweep(token);
    expect(await engine.get(state.id)).toMatchObject({ runtimeStatus: 'Failed', failure: { code: 'NotApproved' } });
    expect(putsUpstream(fixture)).toHaveLength(0);
  });

  it('never sends an approval recorded after the expiry (an instance whose clock lags): it ends NotApproved', async () => {
    const engine = makeApprovalEngine(fixture);
    const state = await hold(engine, { minutes: 5 });
    fixture.clock += 6 * minute;
    // Recorded by a judge that saw the request still waiting (its clock behind the store's).
    const late = await approve(engine, state.id, 'key:approver0001');
    expect(late.customStatus?.approval?.state).toBe('approved');
    await engine.sweep(token);
    await engine.sweep(token);
    expect(putsUpstream(fixture)).toHaveLength(0);
    const ended = await engine.get(state.id);
    expect(ended).toMatchObject({
      runtimeStatus: 'Failed',
      failure: { code: 'NotApproved', message: expect.stringMatching(/not before the request expired/) },
    });
    expect(ended?.customStatus?.approval?.state).toBe('expired');
  });
});
