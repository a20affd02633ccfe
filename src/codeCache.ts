/**
 * Loads a CommonJS file as `require` would, but compiled with a V8 code cache made at build time
 * (issue 14): a cold start otherwise spends about half its load of the app compiling it. The
 * cache is made by tools/build.mjs, which loads the app once and keeps what V8 compiled then
 * (top-level code and the registration it runs), so a cold start neither parses nor compiles
 * those functions again. Node 22 does this itself (module.enableCompileCache); Node 20 does
 * not, and its runtime caches (v8-compile-cache) write to a temporary folder on first run, which
 * a new serverless instance never has.
 *
 * V8 checks a cache against its own version, its flags and the source, and ignores one that does
 * not fit: the file is then compiled as usual, so a missing, stale or foreign cache costs only
 * the read of it. There is no cache without the main context's import() for vm scripts (Node
 * before 20.12), nor with source maps on (--enable-source-maps): Node maps the stack traces of
 * files it loads itself, not of vm scripts, and whoever turns them on wants readable traces more
 * than a faster start.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';

/** What became of the cache: used, refused by V8, absent, or not tried (the file was required). */
export type CodeCacheOutcome = 'accepted' | 'rejected' | 'absent' | 'skipped';

/** The cache beside a file, as the build writes it. */
export const codeCacheFileOf = (file: string) => `${file}.cache`;

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
    parent.require(file);
    return 'skipped';
  }
  const cachedData = options.writeCache ? undefined : cacheOf(file);
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData, importModuleDynamically });
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
  if (options.writeCache) {
    writeFileSync(codeCacheFileOf(file), script.createCachedData());
    return 'absent';
  }
  if (!cachedData) return 'absent';
  return script.cachedDataRejected ? 'rejected' : 'accepted';
}
