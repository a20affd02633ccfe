/** The throughput section: requests a second through the app against the upstream called directly, and a bare proxy's. */
import autocannon from 'autocannon';
import type { RunningAzurite } from '../tools/embeddedAzurite';
import { startApp } from '../tools/harness/appProcess';
import { appEnv, results, root, round, rows, spawnEmulator, spawnListening, token, usagesPath } from './benchKit';

export async function throughput(azurite: RunningAzurite): Promise<void> {
  const figures: Record<string, unknown>[] = [];
  for (const latencyMs of [0, 50]) {
    const emulator = await spawnEmulator({ EMULATOR_LATENCY_MS: String(latencyMs) });
    const app = await startApp(appEnv(emulator.url, azurite));
    for (const connections of [1, 16, 32, 64]) {
      const measure = async (url: string, headers: Record<string, string>) => {
        const result = await autocannon({ url, connections, duration: 3, headers });
        return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, errors: result.errors + result.non2xx };
      };
      const direct = await measure(`${emulator.url}/${usagesPath}`, { authorization: `Bearer ${token}` });
      const viaApp = await measure(`${app.url}/api/${usagesPath}`, {});
      const ratio = round(viaApp.requestsPerSecond / direct.requestsPerSecond);
      figures.push({ upstreamLatencyMs: latencyMs, connections, direct, app: viaApp, ratio });
      rows.push({
        section: 'throughput',
        metric: `usages, ${connections} callers, upstream +${latencyMs} ms`,
        baseline: `${Math.round(direct.requestsPerSecond)} req/s direct`,
        app: `${Math.round(viaApp.requestsPerSecond)} req/s (${viaApp.errors} errors)`,
        difference: `x${ratio}`,
      });
    }
    if (latencyMs === 0)
      figures.push(
        await bareProxyCeiling(
          emulator.url,
          figures.find((figure) => figure.connections === 32)!,
        ),
      );
    await app.stop();
    emulator.child.kill('SIGTERM');
  }
  results.throughput = figures;
}

/**
 * What any server between the caller and the upstream costs on this machine: a bare proxy in a
 * process of its own (node:http in, undici out, the body piped back, nothing checked) against
 * the direct call, at 32 callers. With an instant upstream it does twice the HTTP work of the
 * direct call on the same two cores, which bounds what the app can reach.
 */
async function bareProxyCeiling(emulatorUrl: string, app: Record<string, unknown>): Promise<Record<string, unknown>> {
  const proxyScript = `const { Agent, request } = require('undici'); const agent = new Agent();
    require('node:http').createServer(async (incoming, outgoing) => {
      const answer = await request(${JSON.stringify(emulatorUrl)} + incoming.url.replace(/^\\/api/, ''), { dispatcher: agent, headers: { authorization: 'Bearer ${token}' } });
      outgoing.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
      for await (const chunk of answer.body) outgoing.write(chunk);
      outgoing.end();
    }).listen(0, '127.0.0.1', function () { console.log('Proxy listening on http://127.0.0.1:' + this.address().port); });`;
  const { url, child } = await spawnListening('Proxy', ['-e', proxyScript], { cwd: root });
  try {
    const measured = await autocannon({ url: `${url}/api/${usagesPath}`, connections: 32, duration: 3 });
    const proxy = { requestsPerSecond: measured.requests.average, p99Ms: measured.latency.p99, errors: measured.errors + measured.non2xx };
    const direct = app.direct as { requestsPerSecond: number };
    const viaApp = app.app as { requestsPerSecond: number };
    rows.push({
      section: 'throughput',
      metric: 'usages, 32 callers, upstream +0 ms: a bare proxy (node:http + undici, nothing checked)',
      baseline: `${Math.round(direct.requestsPerSecond)} req/s direct`,
      app: `${Math.round(proxy.requestsPerSecond)} req/s proxy (${proxy.errors} errors)`,
      difference: `x${round(proxy.requestsPerSecond / direct.requestsPerSecond)} (app x${round(viaApp.requestsPerSecond / proxy.requestsPerSecond)} of it)`,
    });
    return { upstreamLatencyMs: 0, connections: 32, bareProxy: proxy, direct, appOverProxy: round(viaApp.requestsPerSecond / proxy.requestsPerSecond) };
  } finally {
    child.kill('SIGTERM');
  }
}
