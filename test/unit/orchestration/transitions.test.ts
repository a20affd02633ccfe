/** How a document changes: an end is final; a refused read moves nothing; a moved URL is followed. */
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';
import { afterRead, ended, running } from '../../../src/orchestration/transitions';

const now = Date.parse('2026-06-01T00:00:00Z');
const policy = { defaultMs: 60_000, floorMs: 1000, ceilingMs: 600_000 };
const context = { notifyUrl: 'https://ops.example.com/all', newId: () => 'event-1' };
const pending: OrchestrationState = {
  id: 'o1',
  name: 'ContainerGroups_CreateOrUpdate',
  runtimeStatus: 'Pending',
  input: { method: 'PUT', path: 'p', query: [] },
  requestKey: 'k',
  notifyTargets: ['https://bot.example.com/hook'],
  createdTime: new Date(now).toISOString(),
  lastUpdatedTime: new Date(now).toISOString(),
};
const plan = { mode: 'location' as const, url: 'https://m/op', resourceUrl: 'https://m/r', retryAfter: '5', deadlineMs: 3600_000 };
const runningState = running(pending, plan, { status: 201 }, now, policy);

describe('ended', () => {
  it('records the end, releases the poll, and opens the outbox for the starter and NOTIFY_URL', () => {
    const claimed = { ...runningState, poll: { ...runningState.poll!, claimedUntil: now + 60_000 } };
    const state = ended(claimed, { runtimeStatus: 'Completed', output: { status: 200 } }, now + 10, context);
    expect(state).toMatchObject({ runtimeStatus: 'Completed', output: { status: 200 }, endedTime: new Date(now + 10).toISOString() });
    expect(state.poll).not.toHaveProperty('claimedUntil');
    expect(state.deliveries?.map((delivery) => delivery.target)).toEqual(['https://bot.example.com/hook', 'https://ops.example.com/all']);
  });

  it('leaves an orchestration that ended as it ended (a late poll after a terminate changes nothing)', () => {
    const terminated = ended(runningState, { runtimeStatus: 'Terminated' }, now, context);
    expect(ended(terminated, { runtimeStatus: 'Completed', output: { status: 200 } }, now + 5, context)).toBe(terminated);
  });
});

describe('afterRead', () => {
  it('waits as asked while running, and follows a moved URL', () => {
    const state = afterRead(runningState, { kind: 'running', state: 'InProgress', retryAfter: '7', movedTo: 'https://m/op2', answerStatus: 202 }, now, policy);
    expect(state.poll).toMatchObject({ url: 'https://m/op2', nextPollAt: now + 7000, pollCount: 1, failedReads: 0 });
  });

  it("a POST's result not ready yet: a running read of the result URL, which the poll reads from now on, the operation Succeeded", () => {
    const following = running(
      pending,
      { ...plan, mode: 'azure-async-operation', url: 'https://m/st', resultUrl: 'https://m/result' },
      { status: 202 },
      now,
      policy,
    );
    const state = afterRead(
      following,
      { kind: 'running', state: 'InProgress', retryAfter: '7', movedTo: 'https://m/result', answerStatus: 202, readsResult: true },
      now,
      policy,
    );
    expect(state.poll).toMatchObject({
      mode: 'location',
      url: 'https://m/result',
      resultUrl: 'https://m/result',
      nextPollAt: now + 7000,
      pollCount: 1,
      failedReads: 0,
    });
    expect(state.customStatus).toEqual({
      upstreamState: 'Succeeded',
      lastReadStatus: 202,
      lastPolledTime: new Date(now).toISOString(),
      message: 'The operation succeeded upstream; its result is not ready yet (202); reading it again.',
    });
    const failed = afterRead(state, { kind: 'read-failed', status: 503, movedTo: 'https://m/result', readsResult: true }, now, policy);
    expect(failed.customStatus).toMatchObject({ upstreamState: 'Succeeded', lastReadStatus: 503, message: 'The result read failed (503); retrying.' });
    expect(failed.poll).toMatchObject({ mode: 'location', url: 'https://m/result', failedReads: 1 });
  });

  it('backs off after a failed read', () => {
    const state = afterRead(runningState, { kind: 'read-failed', status: 503 }, now, policy);
    expect(state.poll).toMatchObject({ nextPollAt: now + 60_000, pollCount: 1, failedReads: 1 });
  });

  it.each([401, 403])("passthrough: moves nothing after a read refused with the reader's token (%i)", (status) => {
    const started = { ...runningState, actor: 'actor-a' };
    const claimed = { ...started, poll: { ...started.poll!, claimedUntil: now + 60_000 } };
    const state = afterRead(claimed, { kind: 'read-failed', status }, now, policy);
    expect(state.poll).toEqual(started.poll);
    expect(state.customStatus).toMatchObject({ lastReadStatus: status });
  });

  it.each([401, 403])("the app's own token refused (%i): backs off as after any failed read, or as long as asked", (status) => {
    expect(afterRead(runningState, { kind: 'read-failed', status }, now, policy).poll).toMatchObject({ nextPollAt: now + 60_000, failedReads: 1 });
    expect(afterRead(runningState, { kind: 'read-failed', status, retryAfter: '300' }, now, policy).poll).toMatchObject({
      nextPollAt: now + 300_000,
      failedReads: 1,
    });
  });
});
