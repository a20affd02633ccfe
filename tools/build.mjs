// Builds the two bundles: the function app the real host loads (package.json "main"), with
// @azure/functions-core left to the worker, and the local host that `npm start` runs.
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { build } from 'esbuild';
import { writeAppCodeCache } from './appCodeCache.mjs';

// ESM builds of some Azure packages (picked through their "exports") read import.meta.url,
// which a CommonJS bundle lacks: give it the bundle's own file URL.
const importMetaUrl = {
  define: { 'import.meta.url': '__bundleFileUrl' },
  banner: { js: "const __bundleFileUrl = require('node:url').pathToFileURL(__filename).href;" },
};
const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', ...importMetaUrl };

/**
 * A cold start pays for reading and compiling every byte of the app's files: comments
 * and indentation go (names stay, so stack traces read as the source does). Output stays ASCII
 * (esbuild escapes other characters in strings): one character above U+00FF anywhere makes V8
 * hold the whole file as a two-byte string, slower to scan.
 */
const appOutput = { ...common, minifyWhitespace: true, charset: 'ascii' };

/**
 * Packages the app requires on first use (src/loading/lazyPackages.ts) are not bundled into index.js:
 * each becomes a file of its own beside it, built after it, and the app's `require.resolve` of
 * the package resolves that file. A package both imported and required would be loaded
 * with index.js anyway, which the build refuses.
 */
const lazyFileOf = (name) => `${name.replace(/^\.*\/|^@/, '').replace(/\//g, '-')}.js`;
/** Each lazy file's name as required in the source, to what its own build requires (a module of the app's own: its absolute path). */
const lazyPackages = new Map();
const lazyPackagesPlugin = {
  name: 'lazy-packages',
  setup(pluginBuild) {
    const imported = new Set();
    // A module of the app's own may be loaded on first use too (the telemetry SDK's set-up).
    pluginBuild.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'require-resolve' || args.importer.includes('node_modules')) return undefined;
      lazyPackages.set(args.path, resolve(args.resolveDir, args.path));
      return { path: `./${lazyFileOf(args.path)}`, external: true };
    });
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.importer.includes('node_modules') || args.path.startsWith('node:')) return undefined;
      if (args.kind !== 'require-resolve') {
        imported.add(args.path);
        return undefined;
      }
      lazyPackages.set(args.path, args.path);
      return { path: `./${lazyFileOf(args.path)}`, external: true };
    });
    pluginBuild.onEnd((result) => {
      for (const name of lazyPackages.keys()) {
        if (imported.has(name)) result.errors.push({ text: `${name} is loaded on first use (src/loading/lazyPackages.ts) and must not be imported as well` });
      }
    });
  },
};

/** `undici` in the app's own code is tools/undiciAgent.mjs (see there); tests and tools keep the package. */
const undiciAgentPlugin = {
  name: 'undici-agent',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^undici$/ }, (args) => (args.importer.includes('node_modules') ? undefined : { path: resolve('tools/undiciAgent.mjs') }));
  },
};

/**
 * zod's namespace carries every translation of its messages (z.locales, 40-odd languages, a fifth
 * of the bundle); the app's messages are English, and zod registers English by importing its
 * own en.js, not through this index. Any other language is left out of the app bundle: asking
 * for one there is a TypeError, not a silent fallback.
 */
const zodEnglishOnlyPlugin = {
  name: 'zod-english-only',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

rmSync('dist/functions', { recursive: true, force: true });
await build({ ...common, entryPoints: ['src/loading/codeCache.ts'], outfile: 'dist/tools/codeCache.js' });
await build({
  ...appOutput,
  entryPoints: ['functions/index.ts'],
  outfile: 'dist/functions/app.js',
  external: ['@azure/functions-core'],
  plugins: [lazyPackagesPlugin, undiciAgentPlugin, zodEnglishOnlyPlugin],
});
/**
 * The telemetry SDK's file is built from the OpenTelemetry packages' ES module builds ("module"
 * before "main"): bundled from their CommonJS builds, every use of another package's export
 * (`api.context`, `core.hrTime`, the app's own `trace.getSpan`) is a getter call of the bundle's,
 * and a span makes dozens of them; from ES modules they are plain references.
 */
const lazyBuildOptions = { './exportSdk': { mainFields: ['module', 'main'] } };
for (const [name, required] of lazyPackages) {
  await build({
    ...appOutput,
    ...lazyBuildOptions[name],
    stdin: { contents: `module.exports = require(${JSON.stringify(required)});`, resolveDir: '.', sourcefile: `${name}.lazy.js` },
    outfile: `dist/functions/${lazyFileOf(name)}`,
  });
}
// The operator console (served by functions/console.ts, which reads these files when asked for):
// a browser bundle of its own, so none of its code is in app.js or runs at start.
const consoleOutput = { bundle: true, minify: true, charset: 'ascii', logLevel: 'warning' };
await build({
  ...consoleOutput,
  entryPoints: ['console/main.ts'],
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  outfile: 'dist/functions/console.js',
});
await build({ ...consoleOutput, entryPoints: ['console/console.css'], outfile: 'dist/functions/console.css' });
copyFileSync('console/console.html', 'dist/functions/console.html');
// What the host loads: app.js, compiled with the code cache made below (src/loading/codeCache.ts).
await build({ ...appOutput, entryPoints: ['src/loading/appLoader.ts'], outfile: 'dist/functions/index.js' });
// With the build's own Node, which `npm start` runs; `npm run package` makes the deployment's.
writeAppCodeCache('dist/functions');
for (const file of readdirSync('dist/functions').filter((name) => name.endsWith('.js'))) {
  const wide = /[^\x00-\xff]/.exec(readFileSync(`dist/functions/${file}`, 'utf8'));
  if (wide) throw new Error(`dist/functions/${file} holds ${JSON.stringify(wide[0])} (above U+00FF): V8 would hold it as a two-byte string`);
}

/**
 * The start script and the benchmark run the app's source with its packages from node_modules; a
 * module of the app's own that the app loads on first use (src/loading/lazyPackages.ts, resolved when that
 * module loads: the local host's HTTPS reads certificates with it) is the app's lazy file in
 * dist/functions.
 */
const appLazyModulesPlugin = {
  name: 'app-lazy-modules',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.kind === 'require-resolve' && !args.importer.includes('node_modules')
        ? { path: `../functions/${lazyFileOf(args.path)}`, external: true }
        : undefined,
    );
  },
};

await build({
  ...common,
  entryPoints: ['tools/start.ts'],
  outfile: 'dist/tools/start.js',
  packages: 'external',
  plugins: [appLazyModulesPlugin],
});
await build({ ...common, entryPoints: ['tools/chat.ts'], outfile: 'dist/tools/chat.js', packages: 'external', plugins: [appLazyModulesPlugin] }); // npm run chat (docs/chatops.md)

// The benchmark and the emulator it runs as a separate process (`npm run bench`).
if (process.argv.includes('--bench')) {
  await build({ ...common, entryPoints: ['bench/bench.ts'], outfile: 'dist/bench/bench.js', packages: 'external', plugins: [appLazyModulesPlugin] });
  await build({ ...common, entryPoints: ['tools/emulator/serveEmulator.ts'], outfile: 'dist/bench/emulator.js', packages: 'external' });
}
