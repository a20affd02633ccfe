/**
 * Loads a CommonJS file as `require` would, but compiled with a V8 code cache made at build time:
 * a cold start otherwise spends about half its load of the app compiling it. The
 * cache is made by tools/build.mjs, which loads the app once and keeps what V8 compiled then
 * (top-level code and the registration it runs), so a cold start neither parses nor compiles
 * those functions again. Node 20 has no cache of its own, and runtime caches (v8-compile-cache)
 * write to a temporary folder on first run, which a new serverless instance never has. Node 22
 * and 24 have module.enableCompileCache, but it keys its entries by the file's absolute path and
 * makes them when a file is compiled, before its functions ran: in the bench (`npm run bench --
 * startup`) the bundle loads 1.06-1.64 times slower with it than with this cache on Node 22,
 * 1.14-1.36 on Node 24, so this one stays on every version.
 *
 * V8 ignores a cache made by another V8 or with other flags (before Node 24, a worker started
 * with --max-old-space-size, say; Node 24's V8 leaves heap sizes out of that check), but of the source it checks only the length, and of the cache's own
 * bytes nothing in a release build: a cache left beside a changed file of the same length would
 * run the old code, and a damaged one can crash the process. So the cache file is sealed: it
 * starts with the SHA-256 of the source it was made for and of its V8 bytes, and is handed to V8
 * only when both match (about 3 ms for the app's two megabytes). Otherwise, and when V8 refuses
 * it, the file compiles as usual: a missing, stale, damaged or foreign cache costs only its read.
 *
 * There is no cache without the main context's import() for vm scripts (Node before 20.12), nor
 * with source maps on (--enable-source-maps): Node maps the stack traces of files it loads
 * itself, not of vm scripts, and whoever turns them on wants readable traces more than a faster
 * start.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';
import { writeWhole } from './writeWhole';

/**
 * What became of the cache: used, refused by V8 (another Node version or V8 flags), not made for
 * this bundle (changed since, or damaged), absent, or not tried (the file was required).
 */
export type CodeCacheOutcome = 'accepted' | 'rejected' | 'stale' | 'absent' | 'skipped';

/** The line a start logs about its cache: what became of it, and why when it was not used. */
export function codeCacheLine(outcome: CodeCacheOutcome, nodeVersion = process.version): string {
  const why: Record<CodeCacheOutcome, string> = {
    accepted: '',
    rejected: ` by V8: it was made by another Node version or with other V8 flags than this Node ${nodeVersion} runs with; the app compiled without it (about 50 ms more). Package with the Node the app runs: npm run package -- --node ${nodeVersion.replace(/^v(\d+).*/, '$1')}`,
    stale: ': it was made for another build of the bundle, or is damaged; the app compiled without it. npm run build (or npm run package) makes a new one',
    absent: ': none beside the bundle; the app compiled without it. npm run build makes one',
    skipped: ': not used with --enable-source-maps (stack traces stay mapped) or on a Node older than 20.12',
  };
  return `V8 code cache of the app: ${outcome}${why[outcome]}`;
}

/** The cache beside a file, as the build writes it. */
export const codeCacheFileOf = (file: string) => `${file}.cache`;

/** What a sealed cache starts with, then the SHA-256 of the source and that of the V8 bytes. */
const sealMark = Buffer.from('gateway code cache 1\n');
const digestBytes = 32;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();

function sealed(source: Buffer, v8Bytes: Buffer): Buffer {
  return Buffer.concat([sealMark, sha256(source), sha256(v8Bytes), v8Bytes]);
}

/** The V8 bytes of a sealed cache made for `source` and arrived whole; else undefined. */
function unsealed(cache: Buffer, source: Buffer): Buffer | undefined {
  const v8Start = sealMark.length + 2 * digestBytes;
  if (cache.length <= v8Start || !cache.subarray(0, sealMark.length).equals(sealMark)) return undefined;
  const v8Bytes = cache.subarray(v8Start);
  const sourceDigest = cache.subarray(sealMark.length, sealMark.length + digestBytes);
  const v8Digest = cache.subarray(sealMark.length + digestBytes, v8Start);
  return sourceDigest.equals(sha256(source)) && v8Digest.equals(sha256(v8Bytes)) ? v8Bytes : undefined;
}

function cacheOf(file: string): Buffer | undefined {
  try {
    return readFileSync(codeCacheFileOf(file));
  } catch {
    return undefined;
  }
}

/**
 * Runs `file` as the module `parent` requires, with its code cache when there is one; with
 * `writeCache`, writes the cache of what ran (the build's step). Answers what became of it.
 */
export function loadWithCodeCache(file: string, parent: NodeJS.Module, options: { writeCache?: boolean } = {}): CodeCacheOutcome {
  // import() in the file needs the main context's loader, which vm scripts get from Node 20.12.
  const importModuleDynamically = vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (!importModuleDynamically || process.sourceMapsEnabled) {
    parent.exports = parent.require(file);
    return 'skipped';
  }
  const source = readFileSync(file);
  const cache = options.writeCache ? undefined : cacheOf(file);
  const cachedData = cache && unsealed(cache, source);
  const script = new Script(Module.wrap(source.toString('utf8')), { filename: file, cachedData, importModuleDynamically });
  const loaded = new Module(file, parent);
  loaded.filename = file;
  // The paths require() would give the file: its own require then resolves as under require().
  loaded.paths = (Module as unknown as { _nodeModulePaths(from: string): string[] })._nodeModulePaths(dirname(file));
  // Its require goes through Module.prototype.require, where the Node worker answers
  // `@azure/functions-core` (and the local host does the same).
  const requireOf = Object.assign((id: string) => loaded.require(id), {
    resolve: Module.createRequire(file).resolve,
    cache: require.cache,
    main: require.main,
  }) as unknown as NodeJS.Require;
  (script.runInThisContext() as (...args: unknown[]) => void).call(loaded.exports, loaded.exports, requireOf, loaded, file, dirname(file));
  loaded.loaded = true;
  // The file's exports are the loader's, as if the loader were the file (npm start reads them).
  parent.exports = loaded.exports;
  if (options.writeCache) {
    writeWhole(codeCacheFileOf(file), sealed(source, script.createCachedData()));
    return 'absent';
  }
  if (!cache) return 'absent';
  if (!cachedData) return 'stale';
  return script.cachedDataRejected ? 'rejected' : 'accepted';
}
