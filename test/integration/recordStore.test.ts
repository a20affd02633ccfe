/**
 * The record store (src/storage/recordStore.ts) and the container made once
 * (src/storage/containerMadeOnce.ts) on Azurite: what each call costs in storage requests, the
 * conditions (a create over a record, a replace on a stale ETag, a removed record), update's
 * tries again on a conflict, where the container is made, and a stall answered within the budget.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../src/errors';
import { containerMadeOnce } from '../../src/storage/containerMadeOnce';
import { jsonFormat, markerFormat, RecordStore, updateConditionally, type RecordStoreOptions } from '../../src/storage/recordStore';
import { StorageBudget } from '../../src/storage/storageBudget';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { countingStorage, type CountingStorage, type Stall } from '../../tools/harness/countingStorage';

interface Note {
  text: string;
  n?: number;
}

let azurite: RunningAzurite;
let storage: CountingStorage;
/** Which requests stall (by their `METHOD path` line), until the caller's budget aborts them. */
let stallOf: (line: string) => Stall | undefined = () => undefined;
let container: string;

beforeAll(async () => {
  azurite = await startAzurite();
  storage = countingStorage(
    azurite.connectionString,
    () => 0,
    (line) => stallOf(line),
  );
});
afterAll(() => azurite.close());
beforeEach(() => {
  stallOf = () => undefined;
  container = `r${randomUUID().replaceAll('-', '').slice(0, 20)}`;
});

const containerClient = () => storage.service.getContainerClient(container);

function storeOf(options: Partial<RecordStoreOptions<Note>> = {}, timeoutMs = 2000): RecordStore<Note> {
  return new RecordStore<Note>({ container: containerClient(), budget: new StorageBudget(timeoutMs, 'Test records'), ...options });
}

async function made(): Promise<void> {
  await containerClient().createIfNotExists();
  storage.reset();
}

describe('RecordStore', () => {
  it('creates a record only where there is none, one conditional PUT each, and reads it with its ETag', async () => {
    await made();
    const records = storeOf();
    expect(await records.read('notes/a.json')).toBeUndefined();
    const etag = await records.create('notes/a.json', { text: 'first' });
    expect(etag).toEqual(expect.any(String));
    expect(await records.create('notes/a.json', { text: 'second' })).toBeUndefined();
    expect(storage.requests).toEqual(['GET ' + container + '/notes/a.json', 'PUT ' + container + '/notes/a.json', 'PUT ' + container + '/notes/a.json']);
    const stored = await records.read('notes/a.json');
    expect(stored).toEqual({ value: { text: 'first' }, etag, lastModified: expect.any(Date), servedAt: expect.any(Date) });
    const properties = await containerClient().getBlockBlobClient('notes/a.json').getProperties();
    expect(properties.contentType).toBe('application/json');
  });

  it('replaces on the ETag read, and refuses a stale ETag and a record removed meanwhile', async () => {
    await made();
    const records = storeOf();
    const first = (await records.create('notes/b.json', { text: 'one' }))!;
    const second = await records.replace('notes/b.json', { text: 'two' }, first);
    expect(second).toEqual(expect.any(String));
    expect(second).not.toBe(first);
    expect(await records.replace('notes/b.json', { text: 'stale' }, first)).toBeUndefined();
    expect((await records.read('notes/b.json'))?.value).toEqual({ text: 'two' });
    await containerClient().deleteBlob('notes/b.json');
    expect(await records.replace('notes/b.json', { text: 'gone' }, second!)).toBeUndefined();
    expect(await records.read('notes/b.json')).toBeUndefined();
  });

  it('writes metadata with a record, which a HEAD and a listing read without a download', async () => {
    await made();
    const records = storeOf();
    const etag = await records.create('notes/c.json', { text: 'meta' }, { metadata: { nextat: '42' } });
    storage.reset();
    expect(await records.head('notes/c.json')).toEqual({ etag, metadata: { nextat: '42' } });
    expect(await records.head('notes/none.json')).toBeUndefined();
    expect(storage.requests).toEqual([`HEAD ${container}/notes/c.json`, `HEAD ${container}/notes/none.json`]);
    const listed = [];
    for await (const item of containerClient().listBlobsFlat({ prefix: 'notes/', includeMetadata: true })) listed.push(item.metadata);
    expect(listed).toEqual([{ nextat: '42' }]);
    // A replace and an unconditional write carry it too.
    await records.replace('notes/c.json', { text: 'meta' }, etag!, { metadata: { nextat: '43' } });
    expect((await records.head('notes/c.json'))?.metadata).toEqual({ nextat: '43' });
    await records.write('notes/c.json', { text: 'meta' }, { metadata: { nextat: '44' } });
    expect((await records.head('notes/c.json'))?.metadata).toEqual({ nextat: '44' });
  });

  it('removes on an ETag only while the record is at it, and without one whatever is there', async () => {
    await made();
    const records = storeOf();
    const first = (await records.create('notes/d.json', { text: 'one' }))!;
    await records.replace('notes/d.json', { text: 'two' }, first);
    expect(await records.remove('notes/d.json', first)).toBe(false);
    const current = (await records.read('notes/d.json'))!;
    expect(await records.remove('notes/d.json', current.etag)).toBe(true);
    expect(await records.remove('notes/d.json', current.etag)).toBe(false);
    await records.write('notes/d.json', { text: 'three' });
    expect(await records.remove('notes/d.json')).toBe(true);
    expect(await records.remove('notes/d.json')).toBe(false);
  });

  it('updates with one read and one write, a create where there is none, and no write when the change says none', async () => {
    await made();
    const records = storeOf();
    const created = await records.update('notes/e.json', (current) => ({ text: 'made', n: (current?.value.n ?? 0) + 1 }), 3);
    expect(created).toMatchObject({ kind: 'written', value: { text: 'made', n: 1 } });
    storage.reset();
    const changed = await records.update('notes/e.json', (current) => ({ text: 'changed', n: current!.value.n! + 1 }), 3);
    expect(changed).toMatchObject({ kind: 'written', value: { text: 'changed', n: 2 } });
    expect(storage.requests).toEqual([`GET ${container}/notes/e.json`, `PUT ${container}/notes/e.json`]);
    storage.reset();
    const left = await records.update('notes/e.json', () => undefined, 3);
    expect(left).toMatchObject({ kind: 'unchanged', current: { value: { text: 'changed', n: 2 } } });
    expect(storage.requests).toHaveLength(1);
  });

  it('updates again after a conflict (another writer between its read and write), and gives up after its attempts', async () => {
    await made();
    const records = storeOf();
    const other = storeOf();
    await records.create('notes/f.json', { text: 'start', n: 0 });
    storage.reset();
    let interleaved = 0;
    const raced = await records.update(
      'notes/f.json',
      async (current) => {
        // The first time, another instance writes after this read: this write's condition fails.
        if (interleaved++ === 0) await other.replace('notes/f.json', { text: 'other', n: 10 }, current!.etag);
        return { text: 'mine', n: current!.value.n! + 1 };
      },
      3,
    );
    expect(raced).toMatchObject({ kind: 'written', value: { text: 'mine', n: 11 } });
    // Read, the other's write, the failed write, read again, write.
    expect(storage.requests.filter((line) => line.startsWith('PUT'))).toHaveLength(3);
    expect(storage.requests.filter((line) => line.startsWith('GET'))).toHaveLength(2);
    const always = await records.update(
      'notes/f.json',
      async (current) => {
        await other.replace('notes/f.json', { text: 'other' }, current!.etag);
        return { text: 'never' };
      },
      2,
    );
    expect(always).toEqual({ kind: 'conflict' });
    expect((await records.read('notes/f.json'))?.value).toEqual({ text: 'other' });
  });

  it('answers a stalled call with StorageUnavailable within its budget, and runs several calls within one budget', async () => {
    await made();
    const records = storeOf({}, 300);
    await records.create('notes/g.json', { text: 'x' });
    stallOf = (line) => (line.startsWith('GET') ? 'request' : undefined);
    const startedAt = performance.now();
    const failure = await records.read('notes/g.json').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'StorageUnavailable', message: 'Test records did not read a record within 300 ms.' });
    expect(performance.now() - startedAt).toBeLessThan(2000);
    // A stall of the second of two calls within one budget fails them both within it.
    const within = await records
      .within('read two notes', async (calls) => {
        stallOf = () => undefined;
        await calls.head('notes/g.json');
        stallOf = (line) => (line.startsWith('GET') ? 'request' : undefined);
        return calls.read('notes/g.json');
      })
      .catch((error: unknown) => error);
    expect(within).toMatchObject({ code: 'StorageUnavailable', message: 'Test records did not read two notes within 300 ms.' });
    // A write whose answer stalls (the service acted) is a failure too, not a conflict.
    stallOf = (line) => (line.startsWith('PUT') ? 'answer' : undefined);
    await expect(records.create('notes/h.json', { text: 'y' }, { what: 'write a note' })).rejects.toMatchObject({
      code: 'StorageUnavailable',
      message: 'Test records did not write a note within 300 ms.',
    });
  });

  it("makes a container 'when missing': the create, the container's, the create again, once", async () => {
    const records = storeOf({ makeContainer: 'when missing' });
    storage.reset();
    expect(await records.create('notes/i.json', { text: 'first' })).toEqual(expect.any(String));
    expect(storage.requests).toEqual([`PUT ${container}/notes/i.json`, `PUT ${container}`, `PUT ${container}/notes/i.json`]);
    storage.reset();
    expect(await records.create('notes/j.json', { text: 'second' })).toEqual(expect.any(String));
    expect(storage.requests).toHaveLength(1);
    // Deleted since: made again (its maker was done, so it makes it anew).
    await containerClient().delete();
    storage.reset();
    expect(await records.create('notes/k.json', { text: 'third' })).toEqual(expect.any(String));
    expect(storage.requests).toEqual([`PUT ${container}/notes/k.json`, `PUT ${container}`, `PUT ${container}/notes/k.json`]);
  });

  it('leaves the container to another store by default: a create finding none fails as a conflict, a read finds nothing', async () => {
    const records = storeOf();
    storage.reset();
    expect(await records.create('notes/l.json', { text: 'x' })).toBeUndefined();
    expect(await records.read('notes/l.json')).toBeUndefined();
    expect(storage.requests).toHaveLength(2);
  });

  it("makes a container 'before the first call', once per process", async () => {
    const records = storeOf({ makeContainer: 'before the first call' });
    storage.reset();
    expect(await records.read('notes/m.json')).toBeUndefined();
    expect(storage.requests).toEqual([`PUT ${container}`, `GET ${container}/notes/m.json`]);
    storage.reset();
    await records.create('notes/m.json', { text: 'x' });
    expect(storage.requests).toEqual([`PUT ${container}/notes/m.json`]);
  });

  it('writes a marker as an empty blob, and JSON indented when asked', async () => {
    await made();
    const markers = new RecordStore({ container: containerClient(), budget: new StorageBudget(2000, 'Test markers'), format: markerFormat });
    expect(await markers.create('marks/a', null)).toEqual(expect.any(String));
    expect(await markers.create('marks/a', null)).toBeUndefined();
    expect((await containerClient().getBlockBlobClient('marks/a').getProperties()).contentLength).toBe(0);
    expect(await markers.read('marks/a')).toMatchObject({ value: null });
    const pretty = new RecordStore<Note>({ container: containerClient(), budget: new StorageBudget(2000, 'Test records'), format: jsonFormat(2) });
    await pretty.write('notes/pretty.json', { text: 'x' });
    expect((await containerClient().getBlockBlobClient('notes/pretty.json').downloadToBuffer()).toString()).toBe('{\n  "text": "x"\n}');
  });
});

describe('containerMadeOnce', () => {
  it('creates the containers once for every call at the same time and after', async () => {
    const second = `${container}b`;
    const make = containerMadeOnce(
      [containerClient(), () => storage.service.getContainerClient(second)],
      new StorageBudget(2000, 'Test'),
      'create its containers',
    );
    storage.reset();
    await Promise.all([make(), make(), make()]);
    await make();
    expect(storage.requests.sort()).toEqual([`PUT ${container}`, `PUT ${second}`].sort());
    expect(await storage.service.getContainerClient(second).exists()).toBe(true);
  });

  it('forgets a creation that failed, so the next call tries again', async () => {
    const make = containerMadeOnce(containerClient(), new StorageBudget(300, 'Test'));
    stallOf = (line) => (line === `PUT ${container}` ? 'request' : undefined);
    await expect(make()).rejects.toMatchObject({ code: 'StorageUnavailable', message: 'Test did not create its container within 300 ms.' });
    stallOf = () => undefined;
    storage.reset();
    await make();
    await make();
    expect(storage.requests).toEqual([`PUT ${container}`]);
    expect(await containerClient().exists()).toBe(true);
  });

  it('makes them again when asked after they were made (found missing), once for calls asking at the same time', async () => {
    const make = containerMadeOnce(containerClient(), new StorageBudget(2000, 'Test'));
    await make();
    storage.reset();
    await Promise.all([make.again(), make.again()]);
    await make();
    expect(storage.requests).toEqual([`PUT ${container}`]);
  });
});

describe('updateConditionally', () => {
  it('throws what the change throws, with no write', async () => {
    const writes: unknown[] = [];
    const versioned = { read: async () => undefined, write: async (value: string) => (writes.push(value), 'etag') };
    await expect(
      updateConditionally(
        versioned,
        () => {
          throw new GatewayError('NotFound', 'None.');
        },
        3,
      ),
    ).rejects.toMatchObject({ code: 'NotFound' });
    expect(writes).toEqual([]);
  });

  it('writes at most `attempts` times, reading before each', async () => {
    const calls: string[] = [];
    const versioned = {
      read: async () => (calls.push('read'), { value: 'v', etag: 'e' }),
      write: async () => (calls.push('write'), undefined),
    };
    expect(await updateConditionally(versioned, () => 'next', 3)).toEqual({ kind: 'conflict' });
    expect(calls).toEqual(['read', 'write', 'read', 'write', 'read', 'write']);
  });
});
