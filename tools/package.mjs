// `npm run package` (after `npm run build`): the zip to deploy to a function app (zip deploy or
// run from package). It holds host.json, a package.json that says where the bundle is, and the
// bundle's folder: index.js, the bundle app.js it runs and that bundle's V8 code cache, the files
// of the packages it loads on first use (tools/build.mjs, which empties the folder before each
// build), and their source maps. The bundle holds every
// dependency but @azure/functions-core, which the Node worker provides, so no node_modules go
// with it. The code cache in it is made with the Node the deployment runs (`--node`, default 22):
// V8 refuses one made by another version, and the build made dist's with this machine's.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { zipSync } from 'fflate';
import { nodeExecutableOf, writeAppCodeCache } from './appCodeCache.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist/management-gateway.zip' }, node: { type: 'string', default: '22' } } });
const out = resolve(root, values.out);

const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
// The host reads `main`. No scripts and no dependencies: a remote build, should one be switched
// on (SCM_DO_BUILD_DURING_DEPLOYMENT), finds nothing to install or run.
const deployedManifest = {
  name: manifest.name,
  version: manifest.version,
  description: manifest.description,
  private: true,
  main: manifest.main,
  engines: manifest.engines,
};

// One fixed time for every entry: the same build makes the same zip, byte for byte.
const mtime = new Date('2000-01-01T00:00:00Z');
const entries = {
  'host.json': readFileSync(resolve(root, 'host.json')),
  'package.json': Buffer.from(`${JSON.stringify(deployedManifest, null, 2)}\n`),
};
const bundleFolder = posix.dirname(manifest.main);
// The cache made in a copy of the bundle's folder: dist's own stays the one `npm start` here takes.
const cacheFolder = mkdtempSync(join(tmpdir(), 'package-code-cache-'));
try {
  cpSync(resolve(root, bundleFolder), cacheFolder, { recursive: true });
  writeAppCodeCache(cacheFolder, nodeExecutableOf(values.node));
  for (const file of readdirSync(cacheFolder).sort()) entries[`${bundleFolder}/${file}`] = readFileSync(join(cacheFolder, file));
} finally {
  rmSync(cacheFolder, { recursive: true, force: true });
}
const zip = zipSync(Object.fromEntries(Object.entries(entries).map(([name, bytes]) => [name, [bytes, { mtime }]])), { level: 9 });

mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, zip);
// The same files unpacked, beside the zip: `azd deploy` zips a folder (azure.yaml's `dist`), not a
// zip file, so it deploys exactly these.
const unpacked = join(dirname(out), 'deploy');
rmSync(unpacked, { recursive: true, force: true });
for (const [name, bytes] of Object.entries(entries)) {
  mkdirSync(dirname(join(unpacked, name)), { recursive: true });
  writeFileSync(join(unpacked, name), bytes);
}
console.log(
  `Wrote ${relative(process.cwd(), out) || out} (${(zip.length / 1024).toFixed(0)} KiB, code cache for Node ${values.node}): ${Object.keys(entries).join(', ')}`,
);
console.log(`and the same files unpacked in ${relative(process.cwd(), unpacked) || unpacked} (what azd deploys)`);
