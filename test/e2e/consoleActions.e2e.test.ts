/**
 * The console's bulk actions, counts and restart in headless Chromium, against the built app on
 * the local host with the emulator and Azurite: a bulk terminate of what the filters match, whose
 * confirmation shows the dry run's count (over several ORCHESTRATION_BULK_BATCH batches); the
 * histogram's totals from `GET orchestrations/counts`; a Restart on an ended orchestration that
 * opens the new one; and a read-only caller offered none of these actions.
 */
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { launchChromium, newConsolePage, signIn } from '../../tools/harness/consoleBrowser';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(120_000);

const subscription = '00000000-0000-0000-0000-000000000000';
const operatorKey = 'console-actions-operator-0001';
const readerKey = 'console-actions-reader-0001';

let gateway: GatewayFixture;
let browser: Browser;
const pageProblems: string[] = [];

async function api(method: string, path: string, key = operatorKey, body?: unknown) {
  const response = await request(gateway.api(path), {
    method: method as 'GET',
    headers: { 'x-functions-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function startGroup(name: string): Promise<string> {
  const started = await api(
    'PUT',
    `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`,
    operatorKey,
    {
      location: 'westus',
      properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] },
    },
  );
  expect(started.status).toBe(201);
  return started.headers['x-orchestration-id'] as string;
}

const statusOf = async (id: string) => (await api('GET', `orchestrations/${id}`)).body.runtimeStatus;

beforeAll(async () => {
  gateway = await startGateway(
    {
      LOCAL_HOST_KEYS: JSON.stringify({ operator: operatorKey, reader: readerKey }),
      ACCESS_POLICY: JSON.stringify([
        { callers: [keyFingerprintOf(operatorKey)], allow: ['read', 'write', 'admin'] },
        { callers: [keyFingerprintOf(readerKey)], allow: ['read', 'admin'] },
      ]),
      // No poller: what is started stays Running until terminated.
      LOCAL_HOST_TIMERS: 'off',
      // Three running ones take two batches, so the dry run's count is the sum of its pages.
      ORCHESTRATION_BULK_BATCH: '2',
    },
    { lroSteps: 1, retryAfterSeconds: 1 },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

async function signedIn(key: string): Promise<Page> {
  const page = await newConsolePage(browser);
  page.on('pageerror', (error) => pageProblems.push(`${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (403|404|409)/.test(message.text())) pageProblems.push(message.text());
  });
  await signIn(page, gateway.api('console'), key);
  return page;
}

describe('the console’s actions on many orchestrations and on one', () => {
  const running: string[] = [];

  it('terminates what the filters match after a confirmation that shows the dry run’s count, and counts by status', async () => {
    for (const name of ['bulk-web', 'bulk-api', 'bulk-worker']) running.push(await startGroup(name));
    const page = await signedIn(operatorKey);
    // Every status's total comes from the counts route.
    await page.locator('.histogram[data-counted="true"]').waitFor();
    await expect(page.locator('.histogram figcaption').textContent()).resolves.toMatch(/: 0 Pending, 3 Running, 0 Completed, 0 Failed, 0 Terminated$/);

    await page.getByRole('checkbox', { name: 'Running' }).check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('button', { name: 'Terminate matching…' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.locator('p').textContent()).resolves.toMatch(/^Terminate the 3 running \(Pending or Running\) orchestrations the filters match\?/);
    // The dry run changed nothing.
    for (const id of running) expect(await statusOf(id)).toBe('Running');
    await dialog.getByRole('button', { name: 'Terminate 3' }).click();
    await page.locator('#announcer', { hasText: 'Terminate: 3 of 3 done.' }).waitFor();
    for (const id of running) expect(await statusOf(id)).toBe('Terminated');
    await page.locator('.histogram figcaption', { hasText: ': 0 Pending, 0 Running, 0 Completed, 0 Failed, 0 Terminated' }).waitFor();
    await page.context().close();
  });

  it('restarts an ended orchestration from its view and opens the new one, linked to it', async () => {
    const original = running[0]!;
    const page = await signedIn(operatorKey);
    await page.goto(`${gateway.api('console')}#/orchestrations/${original}`);
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restart' }).click();
    await page.waitForURL((url) => url.hash.startsWith('#/orchestrations/') && !url.hash.endsWith(original));
    const newId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    await page.getByRole('heading', { name: new RegExp(newId) }).waitFor();
    await expect(page.getByRole('link', { name: original }).getAttribute('href')).resolves.toBe(`#/orchestrations/${original}`);
    expect((await api('GET', `orchestrations/${original}`)).body).toMatchObject({ restartedAs: newId });
    expect((await api('GET', `orchestrations/${newId}`)).body).toMatchObject({ restartedFrom: original, runtimeStatus: 'Running' });
    await page.context().close();
  });

  it('offers a read-only caller no bulk action and no restart', async () => {
    const page = await signedIn(readerKey);
    await expect(page.locator('[data-bulk]').count()).resolves.toBe(0);
    await page.goto(`${gateway.api('console')}#/orchestrations/${running[1]}`);
    await page.getByRole('heading', { name: /Orchestration/ }).waitFor();
    await expect(page.getByRole('button', { name: 'Restart' }).count()).resolves.toBe(0);
    await page.context().close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(pageProblems).toEqual([]);
  });
});
