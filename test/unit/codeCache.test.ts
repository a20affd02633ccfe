/**
 * src/loading/codeCache.ts: a file loaded with the code cache made of it runs as under require(), takes
 * the cache, and one changed since (even at the same length), or whose cache is missing, damaged,
 * garbage or made with other V8 flags, still loads and runs its own code: compiled as usual. Each load is a process of its own, as each cold start is: within one process V8
 * answers a second compile of the same source from memory, whatever the cache holds. The
 * processes run the build of src/loading/codeCache.ts (dist/tools/codeCache.js), as the build does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { codeCacheFileOf, codeCacheLine } from '../../src/loading/codeCache';

const builtLoader = resolve(__dirname, '..', '..', 'dist', 'tools', 'codeCache.js');

/** What loadWithCodeCache answers in a new process, or what that process wrote to stderr. */
function loadWithCodeCache(file: string, options: { writeCache?: boolean; nodeOptions?: string[] } = {}): string {
  const script = `process.stdout.write(require(${JSON.stringify(builtLoader)}).loadWithCodeCache(${JSON.stringify(file)}, module, { writeCache: ${options.writeCache === true} }))`;
  const run = spawnSync(process.execPath, [...(options.nodeOptions ?? []), '-e', script], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout : `failed: ${run.stderr}`;
}

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'code-cache-'));
  writeFileSync(join(folder, 'helper.js'), 'module.exports = { answer: 42 };');
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/**
 * A file that writes what it saw of the CommonJS scope it ran in to seen.json (it runs in Node's
 * own context, not the test's, so a file is what both share).
 */
function writeApp(extra = ''): string {
  const file = join(folder, 'app.js');
  writeFileSync(
    file,
    `const seen = { file: __filename, dir: __dirname, helper: require('./helper.js').answer, resolved: require.resolve('./helper.js'), selfExports: this === module.exports };
     function later() { return [1, 2, 3].map((n) => n * 2); }
     seen.doubled = later();
     ${extra}
     require('node:fs').writeFileSync(require('node:path').join(__dirname, 'seen.json'), JSON.stringify(seen));`,
  );
  return file;
}

const seen = () => JSON.parse(readFileSync(join(folder, 'seen.json'), 'utf8')) as Record<string, unknown>;

it('runs a file as require() would, and takes the cache it wrote of it', () => {
  const file = writeApp();
  expect(loadWithCodeCache(file, { writeCache: true })).toBe('absent');
  expect(readFileSync(codeCacheFileOf(file)).length).toBeGreaterThan(0);
  const expected = { file, dir: folder, helper: 42, resolved: join(folder, 'helper.js'), selfExports: true, doubled: [2, 4, 6] };
  expect(seen()).toEqual(expected);

  rmSync(join(folder, 'seen.json'));
  expect(loadWithCodeCache(file)).toBe('accepted');
  expect(seen()).toEqual(expected);
});

it('compiles as usual a file changed since its cache, or whose cache is missing or garbage', () => {
  const file = writeApp();
  loadWithCodeCache(file, { writeCache: true });
  writeApp('seen.changed = true;');
  expect(loadWithCodeCache(file)).toBe('stale');
  expect(seen()).toMatchObject({ helper: 42, changed: true });

  writeFileSync(codeCacheFileOf(file), Buffer.from('not a code cache'));
  expect(loadWithCodeCache(file)).toBe('stale');

  rmSync(codeCacheFileOf(file));
  rmSync(join(folder, 'seen.json'));
  expect(loadWithCodeCache(file)).toBe('absent');
  expect(seen()).toMatchObject({ changed: true });
});

it('runs the new code of a file changed since its cache, even at the same length', () => {
  // V8 itself compares only the source's length: the seal's digest of the source catches this.
  const file = join(folder, 'app.js');
  const decide = (admin: string, other: string) =>
    `const decide = (role) => (role === 'admin' ? '${admin}' : '${other}');\nrequire('node:fs').writeFileSync(__filename + '.answer', decide('admin'));`;
  writeFileSync(file, decide('DENY', 'PASS'));
  loadWithCodeCache(file, { writeCache: true });
  writeFileSync(file, decide('PASS', 'DENY'));
  expect(loadWithCodeCache(file)).toBe('stale');
  expect(readFileSync(`${file}.answer`, 'utf8')).toBe('PASS');
});

it('neither crashes on nor uses a cache damaged inside', () => {
  // A release V8 does not check a cache's own bytes: damaged ones crashed the process before the seal.
  const file = writeApp(
    Array.from({ length: 300 }, (_, index) => `function f${index}(x) { return [x, ${index}].map((n) => n * 2).join('-'); } f${index}(${index});`).join('\n'),
  );
  loadWithCodeCache(file, { writeCache: true });
  const cache = readFileSync(codeCacheFileOf(file));
  for (let offset = 0; offset < 64; offset += 1) cache[(cache.length >> 1) + offset]! ^= 0x5a;
  writeFileSync(codeCacheFileOf(file), cache);
  rmSync(join(folder, 'seen.json'));
  expect(loadWithCodeCache(file)).toBe('stale');
  expect(seen()).toMatchObject({ helper: 42 });
});

it('compiles as usual when V8 refuses a cache made with other flags', () => {
  const file = writeApp();
  loadWithCodeCache(file, { writeCache: true });
  rmSync(join(folder, 'seen.json'));
  expect(loadWithCodeCache(file, { nodeOptions: ['--no-opt'] })).toBe('rejected');
  expect(seen()).toMatchObject({ helper: 42 });
});

it('runs the file under a heap size of its own: V8 before Node 24 refuses the cache then, Node 24 takes it', () => {
  // The worker may be started with --max-old-space-size (languageWorkers:node:arguments). Node 24's
  // V8 leaves heap sizes out of the flags a cache must match; earlier ones do not.
  const file = writeApp();
  loadWithCodeCache(file, { writeCache: true });
  rmSync(join(folder, 'seen.json'));
  const major = Number(process.versions.node.split('.')[0]);
  expect(loadWithCodeCache(file, { nodeOptions: ['--max-old-space-size=200'] })).toBe(major >= 24 ? 'accepted' : 'rejected');
  expect(seen()).toMatchObject({ helper: 42 });
});

it('lets an error of the file reach the loader', () => {
  const file = join(folder, 'broken.js');
  writeFileSync(file, "throw new Error('the app failed');");
  expect(loadWithCodeCache(file)).toMatch(/failed: [^]*Error: the app failed/);
  writeFileSync(file, 'this is not JavaScript');
  expect(loadWithCodeCache(file)).toMatch(/failed: [^]*SyntaxError/);
});

it('leaves the file to require() when source maps are on, so its stack traces are mapped', () => {
  const file = writeApp();
  loadWithCodeCache(file, { writeCache: true });
  rmSync(join(folder, 'seen.json'));
  expect(loadWithCodeCache(file, { nodeOptions: ['--enable-source-maps'] })).toBe('skipped');
  expect(seen()).toMatchObject({ helper: 42 });
});

it.each([
  ['rejected', /by V8: it was made by another Node version or with other V8 flags than this Node v22\.1\.0 runs with; .*npm run package -- --node 22$/],
  ['stale', /: it was made for another build of the bundle, or is damaged; .*npm run build/],
  ['absent', /: none beside the bundle; .*npm run build makes one$/],
  ['skipped', /--enable-source-maps/],
] as const)('says why a %s cache was not used, and what makes one that is', (outcome, reason) => {
  expect(codeCacheLine(outcome, 'v22.1.0')).toMatch(new RegExp(`^V8 code cache of the app: ${outcome}`));
  expect(codeCacheLine(outcome, 'v22.1.0')).toMatch(reason);
  expect(codeCacheLine('accepted')).toBe('V8 code cache of the app: accepted');
});
