/**
 * dist/functions/index.js, the file the Functions host loads (`package.json` `main`): it runs the
 * app's bundle (functions/index.ts, built to app.js beside it) with the code cache the build
 * made of it (src/loading/codeCache.ts).
 */
import { join } from 'node:path';
import { codeCacheLine, loadWithCodeCache } from './codeCache';

const codeCache = loadWithCodeCache(join(__dirname, 'app.js'), module);
// One line per start: whether the cache is taken where the app runs, which only that Node, with
// the flags it was started with, can say (another version or flag makes V8 refuse it).
// eslint-disable-next-line no-console
console.log(codeCacheLine(codeCache));
