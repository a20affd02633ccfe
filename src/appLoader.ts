/**
 * dist/functions/index.js, the file the Functions host loads (`package.json` `main`): it runs the
 * app's bundle (functions/index.ts, built to app.js beside it) with the code cache the build
 * made of it (src/codeCache.ts). What became of the cache is its one export, which the local
 * host prints; the Functions host reads no exports of a v4 app.
 */
import { join } from 'node:path';
import { loadWithCodeCache } from './codeCache';

export const codeCache = loadWithCodeCache(join(__dirname, 'app.js'), module);
