/** The start-up section: the bundle's load time, size and memory, and a process's time to its first answer. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { azuriteConnectionString } from '../tools/embeddedAzurite';
import { appEnv, keptErrorOutput, median, results, root, round, rows, spawnEmulator, usagesPath } from './benchKit';

export function startup(): void {
  const bundle = resolve(root, 'dist', 'functions', 'index.js');
  const loadOnce = (script: string) => {
    const output = spawnSync(process.execPath, ['-e', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' },
    }).stdout.toString();
    // The measurement is the last line: the app may log its start-up lines (ACCESS_POLICY) first.
    return JSON.parse(output.trimEnd().split('\n').at(-1) ?? '') as { ms: number; rssMiB: number };
  };
  const measureLoad = (script: string) => {
    const samples = Array.from({ length: 5 }, () => loadOnce(script));
    return { ms: round(median(samples.map((sample) => sample.ms))), rssMiB: round(median(samples.map((sample) => sample.rssMiB)), 1) };
  };
  const timed = (body: string) =>
    `const t=process.hrtime.bigint();${body};console.log(JSON.stringify({ms:Number(process.hrtime.bigint()-t)/1e6,rssMiB:process.memoryUsage().rss/2**20}))`;
  // The bundle needs the worker's functions-core; a stand-in that accepts registrations.
  const core = `const M=require('module');const r=M._resolveFilename;M._resolveFilename=function(q,...a){return q==='@azure/functions-core'?'core':r.call(this,q,...a)};M._cache.core={exports:{setProgrammingModel(){},registerFunction(){},registerHook(){}},loaded:true};`;
  const app = measureLoad(`${core}${timed(`require(${JSON.stringify(bundle)})`)}`);
  const appWithoutCodeCache = measureLoad(`${core}${timed(`require(${JSON.stringify(resolve(root, 'dist', 'functions', 'app.js'))})`)}`);
  const sdk = measureLoad(
    timed(
      [
        '@azure/identity',
        '@azure/storage-blob',
        '@azure/arm-containerinstance',
        '@azure/arm-apimanagement',
        '@azure/arm-eventhub',
        '@azure/arm-authorization',
        '@azure/arm-resourcehealth',
      ]
        .map((name) => `require('${name}')`)
        .join(';'),
    ),
  );
  // index.js only loads app.js, the bundle, with its code cache (src/loading/codeCache.ts).
  const appBundle = resolve(root, 'dist', 'functions', 'app.js');
  const bytes = statSync(appBundle).size;
  const gzipped = gzipSync(readFileSync(appBundle)).length;
  const withNodeCompileCache = nodeCompileCacheLoad(
    `${core}${timed(`require(${JSON.stringify(bundle)})`)}`,
    (cacheFolder) => `${core}${timed(`require('node:module').enableCompileCache(${JSON.stringify(cacheFolder)});require(${JSON.stringify(appBundle)})`)}`,
    loadOnce,
  );
  results.startup = { app, appWithoutCodeCache, withNodeCompileCache, azureSdkPackages: sdk, bundleBytes: bytes, bundleGzipBytes: gzipped };
  rows.push(
    {
      section: 'start-up',
      metric: 'load time (median of 5)',
      baseline: `${sdk.ms} ms Azure SDK packages`,
      app: `${app.ms} ms bundle`,
      difference: `x${round(app.ms / sdk.ms)}`,
    },
    {
      section: 'start-up',
      metric: 'load time without the code cache (median of 5)',
      baseline: `${sdk.ms} ms Azure SDK packages`,
      app: `${appWithoutCodeCache.ms} ms bundle`,
      difference: `x${round(appWithoutCodeCache.ms / sdk.ms)}`,
    },
    ...(withNodeCompileCache
      ? [
          {
            section: 'start-up',
            metric: "load time with Node's compile cache instead (medians of 9 alternate loads)",
            baseline: `${withNodeCompileCache.ownCacheMs} ms app's own cache`,
            app: `${withNodeCompileCache.ms} ms module.enableCompileCache`,
            difference: `x${withNodeCompileCache.ratio}`,
          },
        ]
      : []),
    {
      section: 'start-up',
      metric: 'resident memory after load',
      baseline: `${sdk.rssMiB} MiB`,
      app: `${app.rssMiB} MiB`,
      difference: `${round(app.rssMiB - sdk.rssMiB, 1)} MiB`,
    },
    {
      section: 'start-up',
      metric: 'bundle size',
      baseline: '-',
      app: `${(bytes / 2 ** 20).toFixed(2)} MiB (${(gzipped / 2 ** 20).toFixed(2)} MiB gzip)`,
      difference: '-',
    },
  );
}

/**
 * On Node 22+, the bundle loaded with Node's own compile cache (module.enableCompileCache) in
 * place of the app's (src/loading/codeCache.ts), primed by a first load (it is written when a process
 * exits). The two loads alternate, so a busy machine slows both alike; the ratio is the median
 * of each pair's. Undefined on a Node without it.
 */
function nodeCompileCacheLoad(ownCacheScript: string, compileCacheScript: (cacheFolder: string) => string, loadOnce: (script: string) => { ms: number }) {
  if (typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache !== 'function') return undefined;
  const cacheFolder = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
  try {
    loadOnce(compileCacheScript(cacheFolder));
    const pairs = Array.from({ length: 9 }, () => ({ own: loadOnce(ownCacheScript).ms, node: loadOnce(compileCacheScript(cacheFolder)).ms }));
    return {
      ownCacheMs: round(median(pairs.map((pair) => pair.own))),
      ms: round(median(pairs.map((pair) => pair.node))),
      ratio: round(median(pairs.map((pair) => pair.node / pair.own))),
    };
  } finally {
    rmSync(cacheFolder, { recursive: true, force: true });
  }
}

/**
 * Spawns `node ...args` in an empty folder, waits for it to print `<announcement> <url>`, and
 * times from the spawn to the end of the first answer to `path`; the process is then stopped.
 */
async function timeToFirstAnswer(args: string[], env: Record<string, string>, announcement: string, path: string): Promise<number> {
  const cwd = mkdtempSync(resolve(tmpdir(), 'bench-start-'));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const errors = keptErrorOutput(child);
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = new RegExp(`${announcement} (\\S+)`).exec(output);
        if (match) resolveUrl(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}${errors()}`)));
    });
    const response = await request(`${url}${path}`, { headers: { 'content-type': 'application/json' } });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
}

/**
 * Process start to the first served response: `node dist/tools/start.js` (the local host, the
 * bundle, the first call through it) against a bare node HTTP server started the same way. The
 * upstream is an emulator already running, storage a closed port a GET never touches, and
 * timers are off, so only the app's own start is in the figure.
 */
export async function firstResponse(): Promise<void> {
  const emulator = await spawnEmulator({});
  const bareServer = `require('node:http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log('Listening on http://127.0.0.1:'+this.address().port)})`;
  const appSettings = {
    ...appEnv(emulator.url, { connectionString: azuriteConnectionString('http://127.0.0.1:9/devstoreaccount1') }),
    PORT: '0',
    LOCAL_HOST_TIMERS: 'off',
  };
  const bare: number[] = [];
  const app: number[] = [];
  try {
    // Nine: a process start on this shared two-core machine varies by a third from one to the next.
    for (let sample = 0; sample < 9; sample += 1) {
      bare.push(await timeToFirstAnswer(['-e', bareServer], {}, 'Listening on', '/'));
      app.push(await timeToFirstAnswer([resolve(root, 'dist', 'tools', 'start.js')], appSettings, 'Functions host listening on', `/api/${usagesPath}`));
    }
  } finally {
    emulator.child.kill('SIGTERM');
  }
  const figures = { bareNodeMs: round(median(bare)), appMs: round(median(app)) };
  results.firstResponse = figures;
  rows.push({
    section: 'start-up',
    metric: 'process start to first served response (GET list, median of 9)',
    baseline: `${figures.bareNodeMs} ms bare node HTTP server`,
    app: `${figures.appMs} ms local host`,
    difference: `+${round(figures.appMs - figures.bareNodeMs)} ms`,
  });
}
