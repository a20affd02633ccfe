/**
 * `npm run package`: the zip to deploy holds host.json, package.json and the bundle's folder only
 * (index.js, the app.js it runs with its code cache, and the files of the packages it loads on
 * first use), and the app unpacked from it into an empty folder, with no node_modules beside it,
 * serves through the local host run in that folder, as `func start` there would: storage and
 * identity, loaded on first use, included.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { request } from 'undici';
import { openPromise } from 'yauzl';
import { runAppExpectingFailure, startApp } from '../../tools/harness/appProcess';
import { documentedSteps } from '../helpers/documentedCommands';
import { startGateway } from '../../tools/harness/gatewayFixture';
import { azuriteConnectionString } from '../../tools/embeddedAzurite';

const repositoryRoot = resolve(__dirname, '..', '..');
let folder: string;
let appFolder: string;
let entryNames: string[];
/** The Node the package's code cache is made for by default, the one a deployment runs. */
const deployedNodeMajor = '22';
let deployedNode: string;

/** Unpacks with yauzl, which refuses entry names that leave the folder. */
async function unzip(zipPath: string, into: string): Promise<string[]> {
  const zipfile = await openPromise(zipPath);
  const names: string[] = [];
  try {
    for await (const entry of zipfile.eachEntry()) {
      names.push(entry.fileName);
      const target = join(into, entry.fileName);
      mkdirSync(dirname(target), { recursive: true });
      await pipeline(await zipfile.openReadStreamPromise(entry), createWriteStream(target));
    }
  } finally {
    zipfile.close();
  }
  return names;
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'deploy-package-'));
  deployedNode = execFileSync(join(repositoryRoot, 'tools', 'withNode.sh'), [deployedNodeMajor, 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    timeout: 120_000,
  }).trim();
  const zipPath = join(folder, 'gateway.zip');
  // `npm run package` is the build (done before the tests) and then this.
  await promisify(execFile)(process.execPath, [join(repositoryRoot, 'tools', 'package.mjs'), '--out', zipPath], { cwd: repositoryRoot, timeout: 60_000 });
  appFolder = join(folder, 'app');
  mkdirSync(appFolder);
  entryNames = await unzip(zipPath, appFolder);
}, 180_000);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const usagesPath = 'subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01';

it("holds host.json, a package.json naming the bundle, and the bundle's folder: nothing else", () => {
  const built = readdirSync(join(repositoryRoot, 'dist', 'functions')).map((file) => `dist/functions/${file}`);
  expect(entryNames.sort()).toEqual(['host.json', 'package.json', ...built].sort());
  // Every file the bundle loads on first use (src/loading/lazyPackages.ts) is among them.
  const loadedLater = [...readFileSync(join(repositoryRoot, 'dist', 'functions', 'app.js'), 'utf8').matchAll(/require\.resolve\("\.\/([^"]+)"\)/g)].map(
    (match) => `dist/functions/${match[1]}`,
  );
  expect(loadedLater).toEqual(expect.arrayContaining(['dist/functions/azure-identity.js', 'dist/functions/azure-storage-blob.js']));
  expect(entryNames).toEqual(expect.arrayContaining(loadedLater));
  const manifest = JSON.parse(readFileSync(join(appFolder, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(manifest).toMatchObject({ main: 'dist/functions/index.js', engines: { node: '^22 || ^24' } });
  expect(manifest).not.toHaveProperty('dependencies');
  expect(manifest).not.toHaveProperty('scripts');
  expect(readFileSync(join(appFolder, 'host.json'), 'utf8')).toBe(readFileSync(join(repositoryRoot, 'host.json'), 'utf8'));
});

it('writes the same files unpacked beside the zip, byte for byte: the folder azd deploys (azure.yaml)', () => {
  const unpacked = join(folder, 'deploy');
  const files = readdirSync(unpacked, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(unpacked, join(entry.parentPath, entry.name)).split(sep).join('/'));
  expect(files.sort()).toEqual([...entryNames].sort());
  for (const name of entryNames) expect(readFileSync(join(unpacked, name)).equals(readFileSync(join(appFolder, name)))).toBe(true);
  const azureYaml = readFileSync(join(repositoryRoot, 'azure.yaml'), 'utf8');
  expect(azureYaml).toMatch(/^\s+dist: dist\/deploy$/m);
  expect(azureYaml).toMatch(/^\s+run: npm run package$/m);
});

it('serves from the unpacked folder, with no node_modules beside the bundle', async () => {
  // Served by the Node the deployment runs, whichever runs the tests.
  const gateway = await startGateway({}, { listItems: 3, pageSize: 2 }, { cwd: appFolder, node: deployedNode });
  try {
    expect(gateway.app.lines).toContain(`Function app: ${join(appFolder, 'dist', 'functions', 'index.js')}`);
    // The package's code cache was made with that Node, not the build's, and it takes it.
    expect(gateway.app.lines).toContain('V8 code cache of the app: accepted');
    const usages = await request(gateway.api(usagesPath));
    expect(usages.statusCode).toBe(200);
    expect(((await usages.body.json()) as { value: unknown[] }).value).toHaveLength(2);
    const started = await request(
      gateway.api(
        'subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/packaged?api-version=2025-09-01',
      ),
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } }),
      },
    );
    await started.body.dump();
    expect(started.statusCode).toBe(201);
    expect(started.headers.location).toMatch(new RegExp(`^${gateway.app.url}/api/operations/`));
    // The operator console's files went with the bundle, and the app finds them beside it.
    const consolePage = await request(gateway.api('console'));
    expect(consolePage.statusCode).toBe(200);
    expect(await consolePage.body.text()).toContain('console/assets/console.js');
  } finally {
    await gateway.stop();
  }
});

it('loads the identity package from beside the bundle on the first call in managed mode', async () => {
  // Only the environment's credential in the chain, and nothing configured for it: the package
  // loads and the credential refuses at once, with no network. A package that failed to load
  // would answer 500 InternalError instead.
  const gateway = await startGateway({ UPSTREAM_AUTH: 'managed', AZURE_TOKEN_CREDENTIALS: 'EnvironmentCredential' }, {}, { cwd: appFolder });
  try {
    const usages = await request(gateway.api(usagesPath));
    expect(usages.statusCode).toBe(401);
    expect(await usages.body.json()).toMatchObject({ error: { code: 'Unauthorized' } });
    expect(gateway.emulator.upstreamRequests()).toHaveLength(0);
  } finally {
    await gateway.stop();
  }
});

it('refuses to start when a file the bundle loads on first use is missing', async () => {
  const broken = join(folder, 'broken');
  cpSync(appFolder, broken, { recursive: true });
  rmSync(join(broken, 'dist', 'functions', 'azure-storage-blob.js'));
  // Upstream and storage on closed ports: the app fails while loading, before any call.
  const { code, output } = await runAppExpectingFailure(
    {
      MANAGEMENT_BASE_URL: 'http://127.0.0.1:9',
      LIFECYCLE_BASE_URL: 'http://127.0.0.1:9',
      UPSTREAM_AUTH: 'static',
      UPSTREAM_STATIC_TOKEN: 'token',
      AzureWebJobsStorage: azuriteConnectionString('http://127.0.0.1:9/devstoreaccount1'),
    },
    { cwd: broken },
  );
  expect(code).toBe(1);
  expect(output).toMatch(/The function app failed to load: Cannot find module '\.\/azure-storage-blob\.js'/);
});

it("serves as docs/local-development.md says: the repository's local host run in the unpacked folder", async () => {
  const [documented, ...others] = documentedSteps().filter((step) => step.kind === 'package start');
  expect(others).toHaveLength(0);
  const unpackedInto = /cd (\S+) &&/.exec(documented!.block.text)?.[1];
  expect(unpackedInto).toBeDefined();
  // As written, run from the repository, with the folder the zip was unpacked into; nothing configured.
  const app = await startApp({}, { cwd: repositoryRoot, shellCommand: documented!.block.text.replaceAll(unpackedInto!, appFolder) });
  try {
    expect(app.lines).toContain(`Function app: ${join(appFolder, 'dist', 'functions', 'index.js')}`);
    const usages = await request(`${app.url}/api/${usagesPath}`);
    expect(usages.statusCode).toBe(200);
    await usages.body.dump();
  } finally {
    await app.stop();
  }
});
