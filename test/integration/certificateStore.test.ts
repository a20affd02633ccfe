/**
 * The certificate store on Azurite: the same certificate downloaded again (a forced refresh, a
 * renewal run before the service rotated it) comes with a new password, so it is a new bundle;
 * writing it must never touch the current one, and pruning never removes what is current, nor
 * what a concurrent save is about to make current.
 */
import { randomUUID } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';
import { bundleFolderOf, CertificateStore, type CertificateMetadata } from '../../src/certificates/certificateStore';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { countingStorage, type Stall } from '../../tools/harness/countingStorage';

let azurite: RunningAzurite;
let plain: BlobServiceClient;
beforeAll(async () => {
  azurite = await startAzurite();
  plain = BlobServiceClient.fromConnectionString(azurite.connectionString);
});
afterAll(async () => {
  await azurite.close();
});

const metadata: CertificateMetadata = {
  projectId: 7,
  environmentId: 'env-a',
  thumbprint: 'ABCDEF0123',
  expiresAt: '2027-01-01T00:00:00.000Z',
  notBefore: '2026-01-01T00:00:00.000Z',
  subject: 'CN=x',
  issuer: 'CN=x',
  serviceSaid: {},
  filename: 'env-a.zip',
  files: [],
  fetchedAt: '2026-06-01T00:00:00.000Z',
  fetchedBy: 'timer',
};

async function text(container: string, name: string): Promise<string> {
  return (await plain.getContainerClient(container).getBlockBlobClient(name).downloadToBuffer()).toString('utf8');
}

/** The zip and secret `current.json` points at, as a consumer of the bundle reads them. */
async function currentBundle(bundles: string, secrets: string): Promise<{ zip: string; secret: string }> {
  const current = JSON.parse(await text(bundles, '7/env-a/current.json')) as CertificateMetadata;
  const folder = `7/env-a/${bundleFolderOf(current)}`;
  return { zip: await text(bundles, `${folder}/${current.filename}`), secret: await text(secrets, `${folder}/secret`) };
}

/** A save's arguments for the certificate fetched on day `day`: its zip and secret say which. */
const round = (day: number) =>
  [{ ...metadata, fetchedAt: `2026-06-0${day}T00:00:00.000Z` }, Buffer.from(`zip encrypted with password-${day}`), `password-${day}`] as const;

function containers() {
  const suffix = randomUUID().slice(0, 8);
  return { bundles: `bundles-${suffix}`, secrets: `secrets-${suffix}` };
}

it('a failed save of the same certificate again leaves the current zip and secret as they were', async () => {
  const { bundles, secrets } = containers();
  let stallSecrets = false;
  // The secret's write stalls past the store's budget once asked to: the zip is written, the secret is not.
  const storage = countingStorage(azurite.connectionString, (line) => (stallSecrets && line.startsWith('PUT') && line.includes(`${secrets}/`) ? 1500 : 0));
  const store = new CertificateStore(storage.service.getContainerClient(bundles), storage.service.getContainerClient(secrets), 2, 1000);
  await store.save(metadata, Buffer.from('zip encrypted with password-1'), 'password-1');
  stallSecrets = true;
  await expect(
    store.save({ ...metadata, fetchedAt: '2026-06-02T00:00:00.000Z' }, Buffer.from('zip encrypted with password-2'), 'password-2'),
  ).rejects.toMatchObject({ code: 'StorageUnavailable' });
  expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-1', secret: 'password-1' });
}, 30_000);

it('saves of the same certificate each make their own bundle current, and pruning keeps the current one', async () => {
  const { bundles, secrets } = containers();
  const store = new CertificateStore(plain.getContainerClient(bundles), plain.getContainerClient(secrets), 2);
  for (const round of [1, 2, 3]) {
    await store.save({ ...metadata, fetchedAt: `2026-06-0${round}T00:00:00.000Z` }, Buffer.from(`zip encrypted with password-${round}`), `password-${round}`);
    expect(await currentBundle(bundles, secrets)).toEqual({ zip: `zip encrypted with password-${round}`, secret: `password-${round}` });
  }
  const record = await store.read(7, 'env-a');
  expect(record.current).toMatchObject({ thumbprint: metadata.thumbprint, fetchedAt: '2026-06-03T00:00:00.000Z' });
  expect(record.kept).toEqual([metadata.thumbprint, metadata.thumbprint]);
});

/** A point a test holds a storage request at: `reached` once the request comes, sent once `release` is called. */
function holdPoint() {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return { reached, release, hold: () => (reach(), released) };
}

it("with one bundle kept, a save's pruning spares the bundle a concurrent save is about to make current", async () => {
  const { bundles, secrets } = containers();
  // Two instances: A's pruning is held before it lists, B's pointer write before it is sent.
  const aPrunes = holdPoint();
  const bPoints = holdPoint();
  const storeOf = (hold: (line: string) => PromiseLike<unknown> | 0) => {
    const storage = countingStorage(azurite.connectionString, hold);
    return new CertificateStore(storage.service.getContainerClient(bundles), storage.service.getContainerClient(secrets), 1);
  };
  const storeA = storeOf((line) => (line.startsWith(`GET ${bundles}?`) && line.endsWith('comp=list') ? aPrunes.hold() : 0));
  const storeB = storeOf((line) => (line === `PUT ${bundles}/7/env-a/current.json` ? bPoints.hold() : 0));

  await new CertificateStore(plain.getContainerClient(bundles), plain.getContainerClient(secrets), 1).save(...round(1));
  // A makes its bundle current and is held as its pruning begins.
  const a = storeA.save(...round(2));
  await aPrunes.reached;
  // B reads the pointer A wrote, writes its bundle, and is held before it points at it.
  const b = storeB.save(...round(3));
  await bPoints.reached;
  // A prunes while B's bundle is written but not yet current; then B makes it current.
  aPrunes.release();
  await a;
  bPoints.release();
  await b;
  expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-3', secret: 'password-3' });
  expect((await storeA.read(7, 'env-a')).kept).toEqual([metadata.thumbprint]);
});

/** Every blob name in a test's two containers (they hold one environment's). */
async function stored(bundles: string, secrets: string): Promise<{ bundles: string[]; secrets: string[] }> {
  const namesIn = async (container: string) => {
    const names: string[] = [];
    for await (const blob of plain.getContainerClient(container).listBlobsFlat()) names.push(blob.name);
    return names.sort();
  };
  return { bundles: await namesIn(bundles), secrets: await namesIn(secrets) };
}

/** What storage should hold with one bundle kept: the pointer, and the current bundle's metadata, zip and secret. */
async function onlyTheCurrentBundle(bundles: string): Promise<{ bundles: string[]; secrets: string[] }> {
  const current = JSON.parse(await text(bundles, '7/env-a/current.json')) as CertificateMetadata;
  const folder = `7/env-a/${bundleFolderOf(current)}`;
  return { bundles: ['7/env-a/current.json', `${folder}/${current.filename}`, `${folder}/metadata.json`].sort(), secrets: [`${folder}/secret`] };
}

it('a save whose pruning reads no pointer (storage answers 404 a moment) keeps the bundle it made current, and prunes nothing', async () => {
  const { bundles, secrets } = containers();
  const pointerName = `GET ${bundles}/7/env-a/current.json`;
  let pointerReads = 0;
  const pruningReads = holdPoint();
  // The second save's second read of the pointer is its pruning's, held while the pointer is away.
  const storage = countingStorage(azurite.connectionString, (line) => (line === pointerName && ++pointerReads === 4 ? pruningReads.hold() : 0));
  const store = new CertificateStore(storage.service.getContainerClient(bundles), storage.service.getContainerClient(secrets), 1);
  await store.save(...round(1));
  const saving = store.save(...round(2));
  await pruningReads.reached;
  const pointer = plain.getContainerClient(bundles).getBlockBlobClient('7/env-a/current.json');
  const written = await pointer.downloadToBuffer();
  await pointer.delete();
  pruningReads.release();
  await saving;
  await pointer.upload(written, written.length);
  expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-2', secret: 'password-2' });
  // Nothing pruned: the next save does it.
  expect((await store.read(7, 'env-a')).kept).toHaveLength(2);
  await store.save(...round(3));
  expect(await stored(bundles, secrets)).toEqual(await onlyTheCurrentBundle(bundles));
});

/** A store on storage that, while `failing.now`, stalls the requests `stallOf` names (its budget 1 s, so each fails soon). */
function storeFailingWhen(bundles: string, secrets: string, keepBundles: number, stallOf: (line: string) => Stall | undefined) {
  const failing = { now: false };
  const storage = countingStorage(
    azurite.connectionString,
    () => 0,
    (line) => (failing.now ? stallOf(line) : undefined),
  );
  return { store: new CertificateStore(storage.service.getContainerClient(bundles), storage.service.getContainerClient(secrets), keepBundles, 1000), failing };
}

it('a pruning whose secret delete fails keeps the bundle listed, and the next pruning removes its secret', async () => {
  const { bundles, secrets } = containers();
  const { store, failing } = storeFailingWhen(bundles, secrets, 1, (line) => (line.startsWith(`DELETE ${secrets}/`) ? 'request' : undefined));
  await store.save(...round(1));
  failing.now = true;
  // The new bundle is current, so the save succeeds: the failed pruning is left to the next.
  await store.save(...round(2));
  expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-2', secret: 'password-2' });
  expect((await store.read(7, 'env-a')).kept).toHaveLength(2);
  failing.now = false;
  await store.save(...round(3));
  expect(await stored(bundles, secrets)).toEqual(await onlyTheCurrentBundle(bundles));
}, 30_000);

const failingWrites = [
  ['its metadata.json', (bundles: string) => (line: string) => line.startsWith(`PUT ${bundles}/`) && line.endsWith('/metadata.json')],
  ['its secret', (_bundles: string, secrets: string) => (line: string) => line.startsWith(`PUT ${secrets}/`)],
  ['its zip', (bundles: string) => (line: string) => line.startsWith(`PUT ${bundles}/`) && line.endsWith('.zip')],
] as const;

// A write never sent, or sent and made with its answer lost: either way the save fails.
const failedSaves = failingWrites.flatMap(([step, failing]) => (['request', 'answer'] as const).map((stall) => [step, stall, failing] as const));

it.each(failedSaves)(
  'a save that failed writing %s (%s stalled) leaves nothing that the next pruning does not remove',
  async (_step, stall, failing) => {
    const { bundles, secrets } = containers();
    const isFailing = failing(bundles, secrets);
    const { store, failing: storageFailing } = storeFailingWhen(bundles, secrets, 1, (line) => (isFailing(line) ? stall : undefined));
    await store.save(...round(1));
    storageFailing.now = true;
    await expect(store.save(...round(2))).rejects.toMatchObject({ code: 'StorageUnavailable' });
    storageFailing.now = false;
    expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-1', secret: 'password-1' });
    await store.save(...round(3));
    expect(await stored(bundles, secrets)).toEqual(await onlyTheCurrentBundle(bundles));
  },
  30_000,
);

it('lists as kept only whole bundles, not one a failed save left without its zip', async () => {
  const { bundles, secrets } = containers();
  const { store, failing } = storeFailingWhen(bundles, secrets, 1, (line) =>
    line.startsWith(`PUT ${bundles}/`) && line.endsWith('.zip') ? 'request' : undefined,
  );
  await store.save(...round(1));
  failing.now = true;
  await expect(store.save(...round(2))).rejects.toMatchObject({ code: 'StorageUnavailable' });
  failing.now = false;
  expect((await store.read(7, 'env-a')).kept).toHaveLength(1);
}, 30_000);

it('a save that loses the race to the pointer after a pruning removed its listing removes what it wrote', async () => {
  const { bundles, secrets } = containers();
  // S is held before it writes its secret, its metadata.json written; T saves whole meanwhile.
  const sWritesSecret = holdPoint();
  const storage = countingStorage(azurite.connectionString, (line) => (line.startsWith(`PUT ${secrets}/`) ? sWritesSecret.hold() : 0));
  const storeS = new CertificateStore(storage.service.getContainerClient(bundles), storage.service.getContainerClient(secrets), 1);
  const storeT = new CertificateStore(plain.getContainerClient(bundles), plain.getContainerClient(secrets), 1);
  await storeT.save(...round(1));
  const s = storeS.save(...round(2));
  await sWritesSecret.reached;
  // T makes its bundle current and prunes S's, which can no longer become current.
  await storeT.save(...round(3));
  sWritesSecret.release();
  await expect(s).rejects.toMatchObject({ code: 'Conflict' });
  expect(await currentBundle(bundles, secrets)).toEqual({ zip: 'zip encrypted with password-3', secret: 'password-3' });
  expect(await stored(bundles, secrets)).toEqual(await onlyTheCurrentBundle(bundles));
});

it('a bundle a failed save left incomplete never takes the place of a whole one among those kept', async () => {
  const { bundles, secrets } = containers();
  const { store, failing } = storeFailingWhen(bundles, secrets, 2, (line) => (line.startsWith(`PUT ${secrets}/`) ? 'request' : undefined));
  await store.save(...round(1));
  // Listings give creation times to the second: the failed save's bundle is listed as the newer.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  failing.now = true;
  await expect(store.save(...round(2))).rejects.toMatchObject({ code: 'StorageUnavailable' });
  failing.now = false;
  await store.save(...round(3));
  // Kept: the current bundle and the one before it, each with its zip and secret; of the failed save, nothing.
  const kept = await stored(bundles, secrets);
  expect(kept.secrets).toHaveLength(2);
  expect(kept.bundles.filter((name) => name.endsWith('/metadata.json'))).toHaveLength(2);
  expect(kept.bundles.filter((name) => name.endsWith('.zip'))).toHaveLength(2);
}, 30_000);
