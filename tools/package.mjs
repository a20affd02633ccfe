// `npm run package` (after `npm run build`): the zip to deploy to a function app (zip deploy or
// run from package). It holds host.json, a package.json that says where the bundle is, and the
// bundle's folder: index.js, the bundle app.js it runs and that bundle's V8 code cache, the files
// of the packages it loads on first use (tools/build.mjs, which empties the folder before each
// build), and their source maps. The bundle holds every
// dependency but @azure/functions-core, which the Node worker provides, so no node_modules go
// with it.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { zipSync } from 'fflate';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist/management-gateway.zip' } } });
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
for (const file of readdirSync(resolve(root, bundleFolder)).sort()) entries[`${bundleFolder}/${file}`] = readFileSync(resolve(root, bundleFolder, file));
const zip = zipSync(Object.fromEntries(Object.entries(entries).map(([name, bytes]) => [name, [bytes, { mtime }]])), { level: 9 });

mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, zip);
console.log(`Wrote ${relative(process.cwd(), out) || out} (${(zip.length / 1024).toFixed(0)} KiB): ${Object.keys(entries).join(', ')}`);
