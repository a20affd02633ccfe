/** What callers see of an orchestration, from its stored document. */
import { operationAnswer, startAnswer } from '../../../src/calls/orchestrationAnswers';
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';

const base: OrchestrationState = {
  id: '6f1a2b3c-1234-4abc-9def-0123456789ab',
  name: 'ContainerGroups_CreateOrUpdate',
  runtimeStatus: 'Completed',
  input: { method: 'PUT', path: 'subscriptions/s/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/g', query: [] },
  requestKey: 'k',
  createdTime: '2026-01-01T00:00:00.000Z',
  lastUpdatedTime: '2026-01-01T00:01:00.000Z',
};

describe('operationAnswer', () => {
  it('answers the final resource of a completed operation', () => {
    const answer = operationAnswer({ ...base, output: { status: 200, body: { name: 'g' } } }, 'http://app/api', 'c', Date.now());
    expect(answer).toMatchObject({ status: 200, body: '{"name":"g"}' });
  });

  it('answers 409 OrchestrationTerminated for a terminated one, even if a racing poll left an output', () => {
    const answer = operationAnswer(
      { ...base, runtimeStatus: 'Terminated', output: { status: 200, body: { name: 'g' } }, failure: { code: 'Terminated', message: 'stop' } },
      'http://app/api',
      'c',
      Date.now(),
    );
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.body as string)).toMatchObject({ error: { code: 'OrchestrationTerminated' } });
  });
});

describe('startAnswer', () => {
  const upstreamHeaders = {
    'content-type': 'application/json',
    'x-ms-request-id': 'upstream-1',
    location: 'https://management.example/operationResults/1',
    'azure-asyncoperation': 'https://management.example/asyncOperations/1',
    'retry-after': '17',
  };
  const response = { status: 200, headers: upstreamHeaders, bodyText: '{"properties":{"provisioningState":"Succeeded"}}', attempts: 1 };

  // core-lro's inferLroMode polls any Location, Azure-AsyncOperation or Operation-Location of a
  // start's answer: handed on from a final answer, they sent the SDK's poller to the upstream.
  it('hands on no upstream polling header with a final answer, and keeps the rest', () => {
    const answer = startAnswer({ kind: 'final', state: base, response }, 'https://app/api', 'c', Date.now());
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(response.bodyText);
    expect(answer.headers).toEqual({
      'content-type': 'application/json',
      'x-ms-request-id': 'upstream-1',
      'x-correlation-id': 'c',
      'x-orchestration-id': base.id,
    });
  });

  it('points a running answer at the app only', () => {
    const running = { ...base, runtimeStatus: 'Running' as const };
    const answer = startAnswer({ kind: 'running', state: running, response: { ...response, status: 201 } }, 'https://app/api', 'c', Date.now());
    const headers = answer.headers as Record<string, string>;
    expect(headers.location).toBe(`https://app/api/operations/${base.id}`);
    expect(headers['azure-asyncoperation']).toBeUndefined();
    expect(headers['x-ms-request-id']).toBe('upstream-1');
    expect(headers.link).toContain(`<https://app/api/orchestrations/${base.id}>; rel="status"`);
  });
});
