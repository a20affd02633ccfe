import { GatewayError } from '../../../src/errors';
import { OutageLatch, type OutageLatchOptions } from '../../../src/storage/outageLatch';

let clock = 0;
let lines: string[] = [];

function latch(options: Partial<OutageLatchOptions> = {}): OutageLatch {
  return new OutageLatch({
    subject: 'test records',
    fallback: 'each instance keeps its own',
    retryAfterMs: 1000,
    retry: 'one call',
    now: () => clock,
    log: (line) => lines.push(line),
    ...options,
  });
}

const stalled = new GatewayError('StorageUnavailable', 'Test records did not read a record within 300 ms.');

beforeEach(() => {
  clock = 1_000_000;
  lines = [];
});

describe('OutageLatch', () => {
  it('tries storage while it answers, and logs nothing', () => {
    const storage = latch();
    expect(storage.down).toBe(false);
    expect([storage.shouldTry(), storage.shouldTry()]).toEqual([true, true]);
    storage.answered();
    expect(lines).toEqual([]);
  });

  it('logs one line when storage goes, whatever number of failures follow, naming what falls back and how', () => {
    const storage = latch();
    storage.failed(stalled);
    clock += 10;
    storage.failed(stalled);
    storage.failed(new Error('again'));
    expect(storage.down).toBe(true);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        event: 'storage',
        subject: 'test records',
        state: 'down',
        code: 'StorageUnavailable',
        detail: 'Test records did not read a record within 300 ms.',
        fallback: 'each instance keeps its own',
        retryAfterMs: 1000,
      },
    ]);
  });

  it('logs one line when storage is back, with how long it was down, and none for answers after', () => {
    const storage = latch();
    storage.failed(stalled);
    clock += 2500;
    storage.answered();
    storage.answered();
    expect(storage.down).toBe(false);
    expect(lines.slice(1).map((line) => JSON.parse(line))).toEqual([{ event: 'storage', subject: 'test records', state: 'back', downForMs: 2500 }]);
    // The next outage is logged again.
    storage.failed(stalled);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toMatchObject({ state: 'down' });
  });

  it("logs another error's code alone: its message may hold a URL", () => {
    const storage = latch();
    storage.failed(Object.assign(new Error('PUT https://account.blob.core.windows.net/c/b?sig=s3cret failed'), { code: 'ECONNRESET' }));
    expect(JSON.parse(lines[0]!)).toEqual(expect.objectContaining({ code: 'ECONNRESET' }));
    expect(lines[0]).not.toContain('s3cret');
    expect(lines[0]).not.toContain('blob.core');
    storage.answered();
    storage.failed('not even an error');
    expect(JSON.parse(lines[2]!)).toEqual(expect.objectContaining({ code: 'InternalError' }));
    expect(JSON.parse(lines[2]!)).not.toHaveProperty('detail');
  });

  it("with 'one call', lets one call try once retryAfterMs passed since the last failure, the others wait another retryAfterMs", () => {
    const storage = latch({ retry: 'one call' });
    storage.failed(stalled);
    // What each call may do at these times (ms after the failure).
    const tries = (...offsets: number[]) => offsets.map((offset) => ((clock = 1_000_000 + offset), storage.shouldTry()));
    expect(tries(999, 1000, 1000, 1999, 2000)).toEqual([false, true, false, false, true]);
    // A failure of that try moves the next one on from its own time.
    clock = 1_002_400;
    storage.failed(stalled);
    expect(tries(3399, 3400, 3400)).toEqual([false, true, false]);
    expect(lines).toHaveLength(1);
  });

  it("with 'every call', lets every call try once retryAfterMs passed, until one fails again", () => {
    const storage = latch({ retry: 'every call' });
    storage.failed(stalled);
    clock += 999;
    expect(storage.shouldTry()).toBe(false);
    clock += 1;
    expect([storage.shouldTry(), storage.shouldTry(), storage.shouldTry()]).toEqual([true, true, true]);
    storage.failed(stalled);
    expect(storage.shouldTry()).toBe(false);
    expect(storage.down).toBe(true);
  });
});
