/** What one instance keeps of the documents it last wrote: active ones only, within its bytes. */
import type { OrchestrationState } from '../../../src/orchestration/orchestrationState';
import { StateCache } from '../../../src/orchestration/stateCache';

const state = (id: string, fields: Partial<OrchestrationState> = {}): OrchestrationState => ({
  id,
  name: 'ContainerGroups_CreateOrUpdate',
  runtimeStatus: 'Running',
  input: { method: 'PUT', path: 'p', query: [] },
  requestKey: id,
  createdTime: '2026-06-01T00:00:00.000Z',
  lastUpdatedTime: '2026-06-01T00:00:00.000Z',
  ...fields,
});

describe('StateCache', () => {
  it('keeps the newest version of an active orchestration and forgets one that ended', () => {
    const cache = new StateCache(1024 * 1024);
    cache.keep({ state: state('a'), etag: '1' }, 200);
    cache.keep({ state: state('a'), etag: '2' }, 200);
    expect(cache.get('a')?.etag).toBe('2');
    cache.keep({ state: state('a', { runtimeStatus: 'Completed' }), etag: '3' }, 200);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest written past its bytes, and never keeps one document larger than a sixteenth of them', () => {
    const id = (index: number) => `a${String(index).padStart(2, '0')}`;
    const one = 300;
    const cache = new StateCache(one * 16);
    for (let index = 0; index < 20; index += 1) cache.keep({ state: state(id(index)), etag: String(index) }, one);
    expect(cache.size).toBe(16);
    expect(cache.get(id(3))).toBeUndefined();
    expect(cache.get(id(4))?.etag).toBe('4');
    cache.keep({ state: state('big'), etag: '1' }, one + 1);
    expect(cache.get('big')).toBeUndefined();
    expect(new StateCache(0).size).toBe(0);
  });

  it("takes a document's size as the store measured it when writing, never serialising it again (it may be megabytes)", () => {
    const serialise = jest.spyOn(JSON, 'stringify');
    try {
      const cache = new StateCache(64 * 1024 * 1024);
      cache.keep({ state: state('large', { input: { method: 'PUT', path: 'p', query: [], body: 'x'.repeat(1024 * 1024) } }), etag: '1' }, 1024 * 1024 + 200);
      expect(cache.get('large')?.etag).toBe('1');
      expect(serialise).not.toHaveBeenCalled();
    } finally {
      serialise.mockRestore();
    }
  });
});
