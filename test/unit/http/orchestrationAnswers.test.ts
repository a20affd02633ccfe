/** What callers see of an orchestration, from its stored document. */
import { operationAnswer } from '../../../src/http/orchestrationAnswers';
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
    const answer = operationAnswer({ ...base, runtimeStatus: 'Terminated', output: { status: 200, body: { name: 'g' } }, failure: { code: 'Terminated', message: 'stop' } }, 'http://app/api', 'c', Date.now());
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.body as string)).toMatchObject({ error: { code: 'OrchestrationTerminated' } });
  });
});
