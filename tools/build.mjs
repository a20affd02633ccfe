// Builds the two bundles: the function app the real host loads (package.json "main"), with
// @azure/functions-core left to the worker, and the local host that `npm start` runs.
import { build } from 'esbuild';

// ESM builds of some Azure packages (picked through their "exports") read import.meta.url,
// which a CommonJS bundle lacks: give it the bundle's own file URL.
const importMetaUrl = {
  define: { 'import.meta.url': '__bundleFileUrl' },
  banner: { js: "const __bundleFileUrl = require('node:url').pathToFileURL(__filename).href;" },
};
const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', ...importMetaUrl };

await build({
  ...common,
  entryPoints: ['functions/index.ts'],
  outfile: 'dist/functions/index.js',
  external: ['@azure/functions-core'],
  metafile: false,
});

await build({
  ...common,
  entryPoints: ['tools/start.ts'],
  outfile: 'dist/tools/start.js',
  packages: 'external',
});

// The benchmark and the emulator it runs as a separate process (`npm run bench`).
if (process.argv.includes('--bench')) {
  await build({ ...common, entryPoints: ['bench/bench.ts'], outfile: 'dist/bench/bench.js', packages: 'external' });
  await build({ ...common, entryPoints: ['test/emulator/serveEmulator.ts'], outfile: 'dist/bench/emulator.js', packages: 'external' });
}
