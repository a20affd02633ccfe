// The V8 code cache of the app's bundle (src/loading/codeCache.ts), made by loading it once. V8 takes a
// cache only from its own version, so the Node that makes it must be the one that will run the
// app: the build's own Node for `npm start` here, the deployment's for `npm run package`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What to tell before tools/withNode.sh fetches Node <major> (about 120 MB, once): undefined when
 * the running Node is that major or a fetched copy is kept in .node-versions/.
 */
export function nodeFetchNotice(
  major,
  runningMajor = process.versions.node.split('.')[0],
  kept = existsSync(resolve(root, '.node-versions', String(major), 'bin', 'node')),
) {
  if (String(major) === String(runningMajor) || kept) return undefined;
  return [
    `The package's code cache is made with Node ${major}, the Node the function app runs, and this machine runs Node ${runningMajor}:`,
    `fetching Node ${major} from the npm registry into .node-versions/${major}/ (about 120 MB, once; later packages reuse it).`,
    `To avoid it, run this with Node ${major}, or package for an app on Node ${runningMajor}: npm run package -- --node ${runningMajor}.`,
  ].join('\n');
}

/** The executable of Node <major>, fetched by tools/withNode.sh when this machine lacks it. */
export function nodeExecutableOf(major) {
  if (!/^\d+$/.test(String(major))) throw new Error(`A Node version is a major number such as 22, not ${JSON.stringify(major)}`);
  const notice = nodeFetchNotice(major);
  if (notice) console.log(notice);
  const found = spawnSync(resolve(root, 'tools/withNode.sh'), [String(major), 'node', '-p', 'process.execPath'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`Node ${major} is not available: ${found.stderr.slice(-2000)}`);
  return found.stdout.trim();
}

/**
 * Loads <functionsFolder>/app.js once with `node`, as the host would but with a stand-in for the
 * worker's functions-core and placeholder settings, and writes the cache of what that compiled
 * beside it (app.js.cache).
 */
export function writeAppCodeCache(functionsFolder, node = process.execPath) {
  const script = [
    "const Module = require('node:module');",
    'const core = { setProgrammingModel() {}, registerFunction() { return { dispose() {} }; }, registerHook() { return { dispose() {} }; } };',
    'const original = Module.prototype.require;',
    "Module.prototype.require = function (id) { return id === '@azure/functions-core' ? core : original.apply(this, arguments); };",
    `require(${JSON.stringify(resolve(root, 'dist/tools/codeCache.js'))}).loadWithCodeCache(${JSON.stringify(resolve(functionsFolder, 'app.js'))}, module, { writeCache: true });`,
  ].join('\n');
  const placeholders = { PATH: process.env.PATH ?? '', MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' };
  const made = spawnSync(node, ['-e', script], { env: placeholders, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`Making the app's code cache failed: ${made.stderr.slice(-2000)}`);
}
