/**
 * `npm start` as it is (the embedded emulator, `Vendor.*` paths) prints the start the Azure SDKs
 * and az need, and a path naming a provider it serves under another namespace (the SDKs call
 * `Microsoft.*`) answers a 404 that says so and names PROVIDER_NAMESPACE, and is logged; any
 * other unknown path keeps the plain 404.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';

const subscription = '/subscriptions/00000000-0000-0000-0000-000000000000';
let app: AppProcess;
beforeAll(async () => {
  app = await startApp({});
});
afterAll(() => app.stop());

async function errorOf(path: string): Promise<{ status: number; body: unknown }> {
  const answer = await request(`${app.url}/api${path.startsWith('/') ? '' : '/'}${path}`);
  return { status: answer.statusCode, body: await answer.body.json() };
}

it('prints the start for the Azure SDKs and az, which the README gives', () => {
  const hint = app.lines.find((line) => line.startsWith('For the Azure SDKs and az'));
  const command = /: (PROVIDER_NAMESPACE=Microsoft npm start -- --useHttps) \(README, "(.+)"\)\.$/.exec(hint ?? '');
  expect(command).not.toBeNull();
  const readme = readFileSync(resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  expect(readme).toContain(`### ${command![2]!.replace(/\b(SDKs and )az\b/, '$1`az`')}`);
  expect(readme).toMatch(/^PROVIDER_NAMESPACE=Microsoft .*npm start -- --useHttps$/m);
});

it.each([
  [
    'a route of its own',
    `${subscription}/providers/Microsoft.ContainerInstance/locations/westus/usages?api-version=2026-07-01`,
    'Microsoft.ContainerInstance',
    'Vendor.ContainerInstance',
  ],
  [
    'a {scope} route',
    `${subscription}/providers/Microsoft.Authorization/roleAssignmentSchedules?api-version=2020-10-01`,
    'Microsoft.Authorization',
    'Vendor.Authorization',
  ],
])('names the namespace served and PROVIDER_NAMESPACE for %s under Microsoft.*', async (_kind, path, asked, served) => {
  const expected = `No function matches this route: the path names ${asked}, and this app serves ${served} (PROVIDER_NAMESPACE=Vendor). Start it with PROVIDER_NAMESPACE=Microsoft to serve Microsoft.* paths, as the Azure SDKs and az call them.`;
  expect(await errorOf(path)).toEqual({ status: 404, body: { error: { code: 'NotFound', message: expected } } });
  // The local host's log is written in batches: wait for the line (bounded), then check it.
  const logged = `[warning] ${expected.replace('No function matches this route:', 'No function matches a request:')}`;
  for (let waited = 0; !app.lines.includes(logged) && waited < 10_000; waited += 50) await new Promise((wake) => setTimeout(wake, 50));
  expect(app.lines).toContain(logged);
});

it.each([
  ['a provider the app does not serve', `${subscription}/providers/Microsoft.Compute/virtualMachines?api-version=2024-07-01`],
  ['its own namespace on a path it has no route for', `${subscription}/providers/Vendor.ContainerInstance/locations/westus/quotas?api-version=2026-07-01`],
  ['no provider at all', 'nothing/here'],
])('keeps the plain 404 for %s', async (_kind, path) => {
  expect(await errorOf(path)).toEqual({ status: 404, body: { error: { code: 'NotFound', message: 'No function matches this route.' } } });
});
