/**
 * The operator console in headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against the built app on the local host with the emulator and Azurite: sign in with a pasted
 * key, list and filter orchestrations, the histogram, one orchestration, terminate and purge,
 * certificates with one at risk first, health, a read-only caller without actions, an upstream
 * error holding markup shown as text, and the security headers. Screenshots of the main views
 * go to test-results/console/ (git-ignored).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/http/caller';
import { startGateway, type GatewayFixture } from '../helpers/gatewayFixture';

jest.setTimeout(120_000);

const chromiumPath = process.env.CONSOLE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const screenshots = resolve(__dirname, '..', '..', 'test-results', 'console');
const subscription = '00000000-0000-0000-0000-000000000000';
const operatorKey = 'console-operator-key-0001';
const readerKey = 'console-reader-key-0001';
const masterKey = 'console-master-key-0001';
const notifyOrigin = 'http://127.0.0.1:9';
const xssProbe = '<img src=x onerror="window.__consoleXss=1">';
const environments = { atRisk: { projectId: 91, environmentId: randomUUID() }, healthy: { projectId: 92, environmentId: randomUUID() } };

let gateway: GatewayFixture;
let browser: Browser;
/** Script errors and console errors (a CSP violation is one) of every page: none is expected. */
const pageProblems: string[] = [];
const ids = { completed: '', failed: '', running: '' };

async function api(method: string, path: string, key: string, body?: string, headers: Record<string, string> = {}) {
  const response = await request(gateway.api(path), { method, headers: { 'x-functions-key': key, 'content-type': 'application/json', ...headers }, body });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function startGroup(name: string, headers: Record<string, string> = {}): Promise<string> {
  const body = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
  const started = await api('PUT', `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`, operatorKey, body, headers);
  expect(started.status).toBe(201);
  return started.headers['x-orchestration-id'] as string;
}

async function waitForEnd(id: string): Promise<string> {
  const answer = await api('GET', `orchestrations/${id}?gateway-wait=30`, operatorKey);
  return answer.body.runtimeStatus as string;
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium is not installed at ${chromiumPath}: the console's browser tests need Debian's package (run \`apt-get install -y chromium\` as root, as .ci/run does), or set CONSOLE_TEST_CHROMIUM to a Chromium executable.`);
  }
  mkdirSync(screenshots, { recursive: true });
  gateway = await startGateway(
    {
      LOCAL_HOST_KEYS: JSON.stringify({ master: masterKey, operator: operatorKey, reader: readerKey }),
      ACCESS_POLICY: JSON.stringify([
        { callers: [keyFingerprintOf(operatorKey)], allow: ['read', 'write', 'admin'] },
        { callers: [keyFingerprintOf(readerKey)], allow: ['read', 'admin'] },
      ]),
      CERT_ENVIRONMENTS: JSON.stringify([environments.healthy, environments.atRisk]),
      LOCAL_HOST_TIMERS: 'off',
      HEALTH_CACHE_SECONDS: '0',
      GATEWAY_WAIT_MAX_SECONDS: '30',
      // Small bounds, so three orchestrations take two pages and fill the histogram.
      CONSOLE_PAGE_SIZE: '2',
      CONSOLE_HISTOGRAM_MAX_STARTS: '2',
      // A notification target where nothing listens: its delivery stays to be made, for the deliveries table.
      NOTIFY_ALLOWED_ORIGINS: JSON.stringify([notifyOrigin]),
      NOTIFY_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    },
    { lroSteps: 1, retryAfterSeconds: 1 },
  );
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  // One orchestration of each kind the views need: ended well, failed with markup in the
  // upstream's error message, and still running (no timer runs, so it stays so).
  ids.completed = await startGroup('console-completed', { 'x-gateway-notify': `${notifyOrigin}/hook` });
  expect(await waitForEnd(ids.completed)).toBe('Completed');
  gateway.emulator.script({ kind: 'answer', status: 400, pathPattern: 'operationResults', body: { error: { code: 'DeploymentFailed', message: xssProbe } } });
  ids.failed = await startGroup('console-failed');
  expect(await waitForEnd(ids.failed)).toBe('Failed');
  ids.running = await startGroup('console-running');
  // One certificate 3 days from expiry, one with 180.
  gateway.emulator.script({ kind: 'certificate', certificate: { validForDays: 3 }, pathPattern: environments.atRisk.environmentId });
  const refreshed = await api('POST', 'certificates/refresh', operatorKey, '{}');
  expect((refreshed.body.results as { outcome: string }[]).map((result) => result.outcome)).toEqual(['downloaded', 'downloaded']);
});

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

/** `problems` collects the page's script errors, and its console errors unless `scriptErrorsOnly`. */
async function signedIn(key: string, problems = pageProblems, scriptErrorsOnly = false): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', (error) => problems.push(`${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (scriptErrorsOnly) return;
    if (message.type() === 'error' && !/status of (403|404)/.test(message.text())) problems.push(message.text());
  });
  await page.goto(gateway.api('console'));
  // By keyboard: the key field has the focus, Enter signs in.
  await page.getByLabel('Function key').waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.locator('table.orchestrations').waitFor();
  return page;
}

/** The page's globals, for functions run in the browser (the tests' TypeScript has no DOM types); each function is sent alone, so each casts globalThis itself. */
interface BrowserGlobals {
  document: { querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }> };
  sessionStorage: { length: number; getItem(name: string): string | null };
  location: { pathname: string };
  fetch(url: string, init: object): Promise<{ status: number; json(): Promise<unknown> }>;
  __consoleXss?: number;
}

/** Waits until the table shows exactly these orchestrations (in any order). */
async function shownIds(page: Page, expected: string[]): Promise<void> {
  // A function, not a string: the console's CSP (rightly) refuses to evaluate strings in the page.
  await page.waitForFunction((wanted) => {
    const rowsShown = Array.from((globalThis as unknown as BrowserGlobals).document.querySelectorAll('table.orchestrations tbody tr'));
    return JSON.stringify(rowsShown.map((row) => row.getAttribute('data-id')).sort()) === wanted;
  }, JSON.stringify([...expected].sort()));
}

const rows = (page: Page) => page.locator('table.orchestrations tbody tr');
const shoot = (page: Page, name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });

describe('the operator console', () => {
  let operator: Page;
  beforeAll(async () => {
    operator = await signedIn(operatorKey);
  });

  it('is served with a strict Content-Security-Policy, no framing, described in openapi.json, and no key in any URL', async () => {
    const response = await request(gateway.api('console'));
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    const policy = String(response.headers['content-security-policy']);
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(response.headers['x-frame-options']).toBe('DENY');
    const page = await response.body.text();
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // No way in the script to parse a string as markup: values can only become text.
    expect(readFileSync(resolve(__dirname, '..', '..', 'dist', 'functions', 'console.js'), 'utf8')).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser/);
    for (const asset of ['console.js', 'console.css']) {
      const file = await request(gateway.api(`console/assets/${asset}`));
      expect(file.statusCode).toBe(200);
      expect(file.headers['content-security-policy']).toBe(policy);
      await file.body.dump();
    }
    const described = (await api('GET', 'openapi.json', operatorKey)).body.paths as Record<string, Record<string, { security?: unknown[] }>>;
    expect(described['/console']?.get?.security).toEqual([]);
    expect(described['/console/assets/{file}']?.get?.security).toEqual([]);
    expect(described['/console/session']?.get?.security).toBeUndefined();
    expect(operator.url()).not.toContain(operatorKey);
    expect(await operator.evaluate(() => (globalThis as unknown as BrowserGlobals).sessionStorage.length)).toBe(1);
  });

  it('lists the orchestrations with their columns, a page at a time, and draws the histogram of starts by status', async () => {
    // CONSOLE_PAGE_SIZE 2: the continuation token reads on to the third.
    await expect(rows(operator).count()).resolves.toBe(2);
    const firstPage = await rows(operator).evaluateAll((shown) => shown.map((row) => row.getAttribute('data-id')));
    await operator.getByRole('button', { name: 'Next page' }).click();
    await operator.getByText('Page 2').waitFor();
    const secondPage = await rows(operator).evaluateAll((shown) => shown.map((row) => row.getAttribute('data-id')));
    expect([...firstPage, ...secondPage].sort()).toEqual(Object.values(ids).sort());
    await expect(operator.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);
    await operator.getByRole('button', { name: 'Previous page' }).click();
    await operator.getByText('Page 1').waitFor();
    await shownIds(operator, firstPage as string[]);
    const headers = await operator.locator('table.orchestrations thead th').allTextContents();
    expect(headers).toEqual(['Id', 'Name', 'Created', 'Last updated', 'Duration', 'Runtime status', 'Target resource', 'Started by', 'Last upstream error']);
    await operator.getByLabel('Id prefix').fill(ids.completed.slice(0, 13));
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.completed]);
    const completed = operator.locator(`tr[data-id="${ids.completed}"]`);
    await expect(completed.locator('td').nth(5).textContent()).resolves.toBe('Completed');
    await expect(completed.locator('td').nth(6).textContent()).resolves.toContain('/containerGroups/console-completed');
    await expect(completed.locator('td').nth(7).textContent()).resolves.toBe(keyFingerprintOf(operatorKey));
    await expect(operator.locator('.histogram figcaption').textContent()).resolves.toBe('Starts by status: 0 Pending, 0 Running, 1 Completed, 0 Failed, 0 Terminated');
    await expect(operator.locator('.histogram rect[data-status="Completed"]').count()).resolves.toBe(1);
    // Unfiltered, three starts pass CONSOLE_HISTOGRAM_MAX_STARTS (2): the histogram says so.
    await operator.getByLabel('Id prefix').fill('');
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await operator.locator('.histogram[data-total="2"]').waitFor();
    await expect(operator.locator('.histogram figcaption').textContent()).resolves.toMatch(/^Starts by status \(the first 2 only\)/);
    await shoot(operator, 'orchestrations');
  });

  it("shows an upstream error message holding markup as text: no element is made of it, no script runs", async () => {
    await operator.getByLabel('Id prefix').fill(ids.failed);
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.failed]);
    const cell = operator.locator(`tr[data-id="${ids.failed}"] td.upstream-error`);
    await expect(cell.textContent()).resolves.toBe(`DeploymentFailed: ${xssProbe}`);
    await expect(operator.locator('main img').count()).resolves.toBe(0);
    await expect(operator.evaluate(() => (globalThis as unknown as BrowserGlobals).__consoleXss)).resolves.toBeUndefined();
  });

  it('filters by runtime status and by id prefix', async () => {
    await operator.getByLabel('Id prefix').fill('');
    await operator.getByRole('checkbox', { name: 'Failed' }).check();
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.failed]);
    await expect(rows(operator).first().getAttribute('data-id')).resolves.toBe(ids.failed);
    await expect(operator.locator('.histogram').getAttribute('data-total')).resolves.toBe('1');
    await expect(operator.locator('.histogram figcaption').textContent()).resolves.toContain('1 Failed');
    await operator.getByRole('checkbox', { name: 'Failed' }).uncheck();
    await operator.getByLabel('Id prefix').fill(ids.completed.slice(0, 13));
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.completed]);
    await operator.getByLabel('Id prefix').fill(ids.running);
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.running]);
  });

  it('opens one orchestration, terminates it after a confirmation, then purges it', async () => {
    await operator.locator(`a[href="#/orchestrations/${ids.running}"]`).click();
    await operator.getByRole('heading', { name: 'Polls' }).waitFor();
    await expect(operator.locator('pre.document').textContent()).resolves.toContain(`"id": "${ids.running}"`);
    await expect(operator.getByRole('button', { name: 'Purge' }).count()).resolves.toBe(0);
    await expect(operator.getByRole('link', { name: 'Open the resource in the Azure portal' }).getAttribute('href')).resolves.toBe(
      `https://portal.azure.com/#resource/subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/console-running`,
    );
    await shoot(operator, 'orchestration');
    // Cancel first: nothing happens.
    await operator.getByRole('button', { name: 'Terminate' }).click();
    await operator.locator('dialog.confirm').getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', `orchestrations/${ids.running}`, operatorKey)).body.runtimeStatus).not.toBe('Terminated');
    await operator.getByRole('button', { name: 'Terminate' }).click();
    await operator.locator('dialog.confirm').getByRole('button', { name: 'Terminate' }).click();
    await operator.locator('h1 .badge', { hasText: 'Terminated' }).waitFor();
    expect((await api('GET', `orchestrations/${ids.running}`, operatorKey)).body.runtimeStatus).toBe('Terminated');
    await operator.getByRole('button', { name: 'Purge' }).click();
    await operator.locator('dialog.confirm').getByRole('button', { name: 'Purge' }).click();
    await operator.waitForURL(/#\/orchestrations$/);
    // Back on the list, still filtered to its id: it is gone.
    await operator.getByText('No orchestration matches these filters.').waitFor();
    expect((await api('GET', `orchestrations/${ids.running}`, operatorKey)).status).toBe(404);
  });

  it('shows the certificates, the one at risk first, with a refresh button', async () => {
    await operator.getByRole('link', { name: 'Certificates' }).click();
    await operator.locator('table.certificates tbody tr').nth(1).waitFor();
    const first = operator.locator('table.certificates tbody tr').first();
    await expect(first.getAttribute('data-environment')).resolves.toBe(environments.atRisk.environmentId);
    await expect(first.getAttribute('class')).resolves.toBe('at-risk');
    await expect(first.locator('td').nth(4).textContent()).resolves.toBe('2');
    await expect(operator.locator('table.certificates tbody tr').nth(1).locator('td').last().textContent()).resolves.toBe('OK');
    await expect(operator.getByRole('button', { name: 'Refresh every environment' }).count()).resolves.toBe(1);
    await shoot(operator, 'certificates');
    await operator.getByRole('link', { name: 'Health' }).click();
    await operator.getByRole('heading', { name: 'Dependencies' }).waitFor();
    await shoot(operator, 'health');
  });

  it('gives a read-only caller no action buttons, and the API refuses the action anyway', async () => {
    const reader = await signedIn(readerKey);
    await expect(reader.locator('#who').textContent()).resolves.toContain('(read only)');
    await reader.locator(`a[href="#/orchestrations/${ids.completed}"]`).click();
    await reader.getByRole('heading', { name: 'Polls' }).waitFor();
    await expect(reader.locator('.actions button').count()).resolves.toBe(0);
    await expect(reader.locator('table.deliveries tbody tr td').first().textContent()).resolves.toBe(notifyOrigin);
    await reader.getByRole('link', { name: 'Certificates' }).click();
    await reader.locator('table.certificates tbody tr').first().waitFor();
    await expect(reader.getByRole('button', { name: 'Refresh every environment' }).count()).resolves.toBe(0);
    // The page's own key, sent as the page sends it: the route refuses a purge to this caller.
    const refused = await reader.evaluate(async (id) => {
      const page = (globalThis as unknown as BrowserGlobals);
      const key = page.sessionStorage.getItem('management-gateway-console-key') ?? '';
      const response = await page.fetch(`${page.location.pathname.replace(/console$/, '')}orchestrations/${id}`, { method: 'DELETE', headers: { 'x-functions-key': key } });
      return { status: response.status, body: await response.json() };
    }, ids.completed);
    expect(refused).toEqual({ status: 403, body: { error: expect.objectContaining({ code: 'OperationNotAllowed' }) } });
    await reader.context().close();
  });

  it('refreshes the list on its own when auto-refresh is on', async () => {
    await operator.getByRole('link', { name: 'Orchestrations' }).click();
    await operator.getByLabel('Id prefix').fill('');
    await operator.getByRole('checkbox', { name: 'Running' }).check();
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await operator.getByText('No orchestration matches these filters.').waitFor();
    await operator.getByLabel('Auto-refresh').selectOption('5');
    const started = await startGroup('console-refreshed');
    await operator.locator(`tr[data-id="${started}"]`).waitFor();
    await operator.getByLabel('Auto-refresh').selectOption('0');
  });

  it('shows the API\'s answer, not a broken page, for a link whose id is not valid percent-encoding', async () => {
    // The API refuses such an id (a console error the browser logs): only script errors count here.
    const scriptErrors: string[] = [];
    const page = await signedIn(readerKey, scriptErrors, true);
    await page.goto(`${gateway.api('console')}#/orchestrations/%E0%A4`);
    await page.getByRole('link', { name: 'Back to the list' }).waitFor();
    await expect(page.locator('p.error').textContent()).resolves.toMatch(/\S/);
    expect(scriptErrors).toEqual([]);
    await page.context().close();
  });

  it('ran without a script error or a Content-Security-Policy violation in any view', () => {
    expect(pageProblems).toEqual([]);
  });
});
