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
import { countingStorage } from '../helpers/countingStorage';

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
  projectId: 7, environmentId: 'env-a', thumbprint: 'ABCDEF0123', expiresAt: '2027-01-01T00:00:00.000Z', notBefore: '2026-01-01T00:00:00.000Z',
  subject: 'CN=x', issuer: 'CN=x', serviceSaid: {}, filename: 'env-a.zip', files: [], fetchedAt: '2026-06-01T00:00:00.000Z', fetchedBy: 'timer',
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
  await expect(store.save({ ...metadata, fetchedAt: '2026-06-02T00:00:00.000Z' }, Buffer.from('zip encrypted with password-2'), 'password-2')).rejects.toMatchObject({ code: 'StorageUnavailable' });
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

it('with one bundle kept, a save\'s pruning spares the bundle a concurrent save is about to make current', async () => {
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
  const round = (day: number) => [{ ...metadata, fetchedAt: `2026-06-0${day}T00:00:00.000Z` }, Buffer.from(`zip encrypted with password-${day}`), `password-${day}`] as const;

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
