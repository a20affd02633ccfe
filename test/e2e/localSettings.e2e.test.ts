/**
 * `npm start` reads `local.settings.json` of its folder as Core Tools does: Values into the
 * environment, the environment winning; encrypted or broken files stop start-up with a message.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'jsonc-parser';
import { request } from 'undici';
import { runAppExpectingFailure, startApp } from '../../tools/harness/appProcess';
import { emulatorToken, startGateway } from '../../tools/harness/gatewayFixture';

const usagesPath = 'subscriptions/00000000-0000-0000-0000-000000000000/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'app-folder-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function writeSettings(text: string): string {
  const path = join(folder, 'local.settings.json');
  writeFileSync(path, text);
  return path;
}

it('takes the Values the environment lacks, and leaves the ones it has', async () => {
  writeSettings(
    JSON.stringify({
      IsEncrypted: false,
      Values: { APP_PUBLIC_URL: 'https://gw.contoso.example/api', UPSTREAM_STATIC_TOKEN: 'CANARY-SECRET-not-the-token' },
    }),
  );
  // The fixture sets UPSTREAM_STATIC_TOKEN in the environment: it wins, so calls still pass.
  const gateway = await startGateway({}, { listItems: 3, pageSize: 2 }, { cwd: folder });
  try {
    expect(gateway.app.lines).toContain("Read 1 setting from local.settings.json (the environment's own kept for UPSTREAM_STATIC_TOKEN)");
    const answer = await request(gateway.api(usagesPath));
    expect(answer.statusCode).toBe(200);
    expect(((await answer.body.json()) as { nextLink: string }).nextLink).toMatch(/^https:\/\/gw\.contoso\.example\/api\/subscriptions\//);
    expect(gateway.emulator.upstreamRequests()[0]!.headers.authorization).toBe(`Bearer ${emulatorToken}`);
  } finally {
    await gateway.stop();
  }
});

it('refuses IsEncrypted: true with a message saying what to do', async () => {
  writeSettings(JSON.stringify({ IsEncrypted: true, Values: { UPSTREAM_STATIC_TOKEN: 'CANARY-SECRET-encrypted' } }));
  const { code, output } = await runAppExpectingFailure({}, { cwd: folder });
  expect(code).toBe(1);
  expect(output).toMatch(/local\.settings\.json has "IsEncrypted": true/);
  expect(output).toMatch(/func settings decrypt/);
  expect(output).not.toContain('CANARY-SECRET');
});

it('stops at invalid JSON, naming the file and the line, and quoting none of it', async () => {
  const path = writeSettings('{\n  "Values": {\n    "UPSTREAM_STATIC_TOKEN": "CANARY-SECRET-token",\n  }\n}\n');
  const { code, output } = await runAppExpectingFailure({}, { cwd: folder });
  expect(code).toBe(1);
  expect(output).toContain(`${path} is not valid JSON: line 4, column 3`);
  expect(output).not.toContain('CANARY-SECRET');
});

it('runs local.settings.sample.json copied as it is: the embedded emulator and Azurite, its namespace and its key', async () => {
  const sample = resolve(__dirname, '..', '..', 'local.settings.sample.json');
  copyFileSync(sample, join(folder, 'local.settings.json'));
  const { Values: values } = parse(readFileSync(sample, 'utf8')) as { Values: Record<string, string> };
  const key = (JSON.parse(values.LOCAL_HOST_KEYS!) as Record<string, string>).default!;
  // Nothing but the sample: no upstream, storage or token in the environment.
  const app = await startApp({}, { cwd: folder });
  try {
    const path = `api/subscriptions/00000000-0000-0000-0000-000000000000/providers/${values.PROVIDER_NAMESPACE}.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
    const answer = await request(`${app.url}/${path}`, { headers: { 'x-functions-key': key } });
    expect({ status: answer.statusCode, body: await answer.body.json() }).toEqual({ status: 200, body: expect.objectContaining({ value: expect.any(Array) }) });
    const refresh = await request(`${app.url}/api/certificates/refresh`, { method: 'POST', headers: { 'x-functions-key': key } });
    expect({ status: refresh.statusCode, body: await refresh.body.json() }).toEqual({
      status: 200,
      body: { results: [expect.objectContaining({ outcome: 'downloaded' })] },
    });
    expect(app.lines.join('\n')).not.toMatch(/failed|error/i);
  } finally {
    await app.stop();
  }
});
