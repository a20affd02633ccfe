/**
 * The operator console in headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against the built app on the local host with the emulator and Azurite: sign in with a pasted
 * key, list and filter orchestrations, the histogram, one orchestration, terminate and purge,
 * certificates with one at risk first, health, a read-only caller without actions, an upstream
 * error holding markup shown as text, and the security headers; newest first across pages,
 * sorting and searching, readable resource names, no horizontal scroll 800 px wide, the page at
 * `console/` too, no favicon 404, the histogram's buckets from the data's span, and the portal
 * link for Microsoft.* resources only (the last three on list answers the test makes). Screenshots
 * of the main views go to test-results/console/ (git-ignored).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { launchChromium, newConsolePage, signIn } from '../../tools/harness/consoleBrowser';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(120_000);

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
  const started = await api(
    'PUT',
    `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/${name}?api-version=2025-09-01`,
    operatorKey,
    body,
    headers,
  );
  expect(started.status).toBe(201);
  return started.headers['x-orchestration-id'] as string;
}

async function waitForEnd(id: string): Promise<string> {
  const answer = await api('GET', `orchestrations/${id}?gateway-wait=30`, operatorKey);
  return answer.body.runtimeStatus as string;
}

beforeAll(async () => {
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
      // Small bounds: three orchestrations take two pages; more than ten matching are more than the console reads.
      CONSOLE_PAGE_SIZE: '2',
      CONSOLE_HISTOGRAM_MAX_STARTS: '10',
      // A notification target where nothing listens: its delivery stays to be made, for the deliveries table.
      NOTIFY_ALLOWED_ORIGINS: JSON.stringify([notifyOrigin]),
      NOTIFY_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    },
    { lroSteps: 1, retryAfterSeconds: 1 },
  );
  browser = await launchChromium();
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

interface PageOptions {
  /** Collects the page's script errors, and its console errors unless `scriptErrorsOnly`. */
  problems?: string[];
  scriptErrorsOnly?: boolean;
  width?: number;
  /** Run before the page is opened (routes the test answers). */
  prepare?: (page: Page) => Promise<void>;
}

async function signedIn(key: string, { problems = pageProblems, scriptErrorsOnly = false, width = 1400, prepare }: PageOptions = {}): Promise<Page> {
  const page = await newConsolePage(browser, width);
  page.on('pageerror', (error) => problems.push(`${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (scriptErrorsOnly) return;
    if (message.type() === 'error' && !/status of (403|404)/.test(message.text())) problems.push(message.text());
  });
  await prepare?.(page);
  await signIn(page, gateway.api('console'), key);
  return page;
}

/** The page's globals, for functions run in the browser (the tests' TypeScript has no DOM types); each function is sent alone, so each casts globalThis itself. */
interface BrowserGlobals {
  document: {
    querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }>;
    querySelector(selector: string): object | null;
    documentElement: { scrollWidth: number; clientWidth: number };
  };
  getComputedStyle(element: object): { backgroundColor: string };
  sessionStorage: { length: number; getItem(name: string): string | null };
  location: { pathname: string };
  fetch(url: string, init: object): Promise<{ status: number; json(): Promise<unknown> }>;
  __consoleXss?: number;
}

/** Waits until the table shows exactly these orchestrations, in this order. */
async function shownIds(page: Page, expected: string[]): Promise<void> {
  // A function, not a string: the console's CSP (rightly) refuses to evaluate strings in the page.
  await page.waitForFunction((wanted) => {
    const rowsShown = Array.from((globalThis as unknown as BrowserGlobals).document.querySelectorAll('table.orchestrations tbody tr'));
    return JSON.stringify(rowsShown.map((row) => row.getAttribute('data-id'))) === wanted;
  }, JSON.stringify(expected));
}

/** How far the page is wider than its window, or the table than its area (0 or less: no horizontal scroll). */
const overflowOf = (page: Page) =>
  page.evaluate(() => {
    const { document } = globalThis as unknown as BrowserGlobals;
    const boxes = [
      document.documentElement,
      ...(Array.from(document.querySelectorAll('.table-area')) as unknown as { scrollWidth: number; clientWidth: number }[]),
    ];
    return Math.max(...boxes.map((box) => box.scrollWidth - box.clientWidth));
  });

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
    expect(readFileSync(resolve(__dirname, '..', '..', 'dist', 'functions', 'console.js'), 'utf8')).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser/,
    );
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

  it('lists the orchestrations newest first with their columns, a page at a time, and draws the histogram of starts by status', async () => {
    // CONSOLE_PAGE_SIZE 2: the third, the oldest, is on the second page.
    await expect(rows(operator).count()).resolves.toBe(2);
    const firstPage = await rows(operator).evaluateAll((shown) => shown.map((row) => row.getAttribute('data-id')));
    await operator.getByRole('button', { name: 'Next page' }).click();
    await operator.getByText('Page 2').waitFor();
    const secondPage = await rows(operator).evaluateAll((shown) => shown.map((row) => row.getAttribute('data-id')));
    expect([...firstPage, ...secondPage]).toEqual([ids.running, ids.failed, ids.completed]);
    await expect(operator.locator('th[aria-sort="descending"]').textContent()).resolves.toBe('Created');
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
    // The target: the resource's name and group, the whole id on hover.
    const target = completed.locator('td').nth(6);
    await expect(target.locator('.resource-name').textContent()).resolves.toBe('console-completed');
    await expect(target.locator('.resource-group').textContent()).resolves.toBe('rg');
    await expect(target.getAttribute('title')).resolves.toBe(
      `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/console-completed`,
    );
    await expect(completed.locator('td').nth(7).textContent()).resolves.toBe(keyFingerprintOf(operatorKey));
    await expect(operator.locator('.histogram figcaption').textContent()).resolves.toMatch(/: 0 Pending, 0 Running, 1 Completed, 0 Failed, 0 Terminated$/);
    await expect(operator.locator('.histogram rect[data-status="Completed"]').count()).resolves.toBe(1);
    await operator.getByLabel('Id prefix').fill('');
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await operator.locator('.histogram[data-total="3"]').waitFor();
    await shoot(operator, 'orchestrations');
  });

  it('shows an upstream error message holding markup as text: no element is made of it, no script runs', async () => {
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

  it('sorts by a column, saying so with aria-sort, and searches the page shown by resource name', async () => {
    await operator.getByLabel('Id prefix').fill('');
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.running, ids.failed]);
    const sortedBy = () =>
      operator.locator('th[aria-sort]').evaluateAll((headers) => headers.map((header) => `${header.textContent} ${header.getAttribute('aria-sort')}`));
    await operator.getByRole('button', { name: 'Created' }).click();
    await expect(sortedBy()).resolves.toEqual(['Created ascending']);
    await shownIds(operator, [ids.completed, ids.failed]);
    await operator.getByRole('button', { name: 'Runtime status' }).click();
    await operator.getByRole('button', { name: 'Runtime status' }).click();
    await expect(sortedBy()).resolves.toEqual(['Runtime status descending']);
    await expect(rows(operator).first().getAttribute('data-id')).resolves.toBe(ids.running);
    await operator.getByRole('button', { name: 'Created' }).click();
    await expect(sortedBy()).resolves.toEqual(['Created descending']);
    await shownIds(operator, [ids.running, ids.failed]);
    // The search filters the rows of the page shown, by the resource's name or group.
    await operator.getByLabel('Search this page by resource name').fill('FAILED');
    await shownIds(operator, [ids.failed]);
    await operator.getByLabel('Search this page by resource name').fill('console-completed');
    await operator.getByText('No orchestration on this page matches').waitFor();
    await operator.getByLabel('Search this page by resource name').fill('');
    await shownIds(operator, [ids.running, ids.failed]);
  });

  it('opens one orchestration, terminates it after a confirmation, then purges it', async () => {
    await operator.getByLabel('Id prefix').fill(ids.running);
    await operator.getByRole('button', { name: 'Apply filters' }).click();
    await shownIds(operator, [ids.running]);
    await operator.locator(`a[href="#/orchestrations/${ids.running}"]`).click();
    await operator.getByRole('heading', { name: 'Polls' }).waitFor();
    await expect(operator.locator('pre.document').textContent()).resolves.toContain(`"id": "${ids.running}"`);
    await expect(operator.getByRole('button', { name: 'Purge' }).count()).resolves.toBe(0);
    // The whole id in the detail view; no portal link for the emulator's Vendor.* resources, where it leads nowhere.
    await expect(operator.locator('.facts').textContent()).resolves.toContain(
      `/subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/console-running`,
    );
    await expect(operator.getByRole('link', { name: 'Open the resource in the Azure portal' }).count()).resolves.toBe(0);
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

  it('keeps a view that answers late from drawing over the view the user moved on to', async () => {
    const page = await signedIn(operatorKey, {
      // Health answers only after the user has left it for the certificates.
      prepare: async (opened) => void (await opened.route('**/api/health', (route) => setTimeout(() => void route.continue(), 1500))),
    });
    const healthAnswer = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/api/health'));
    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('link', { name: 'Certificates' }).click();
    await page.locator('table.certificates tbody tr').nth(1).waitFor();
    await (await healthAnswer).finished();
    // The late answer has been read and had time to be drawn; the certificates are still what is shown.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    await expect(page.locator('table.certificates').count()).resolves.toBe(1);
    await expect(page.getByRole('heading', { name: 'Dependencies' }).count()).resolves.toBe(0);
    await page.close();
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
      const page = globalThis as unknown as BrowserGlobals;
      const key = page.sessionStorage.getItem('management-gateway-console-key') ?? '';
      const response = await page.fetch(`${page.location.pathname.replace(/console$/, '')}orchestrations/${id}`, {
        method: 'DELETE',
        headers: { 'x-functions-key': key },
      });
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

  it("shows the API's answer, not a broken page, for a link whose id is not valid percent-encoding", async () => {
    // The API refuses such an id (a console error the browser logs): only script errors count here.
    const scriptErrors: string[] = [];
    const page = await signedIn(readerKey, { problems: scriptErrors, scriptErrorsOnly: true });
    await page.goto(`${gateway.api('console')}#/orchestrations/%E0%A4`);
    await page.getByRole('link', { name: 'Back to the list' }).waitFor();
    await expect(page.locator('p.error').textContent()).resolves.toMatch(/\S/);
    expect(scriptErrors).toEqual([]);
    await page.context().close();
  });

  it('fits a window 800 px wide: no horizontal scroll in the list, one orchestration, the certificates or health', async () => {
    const id = await startGroup('console-narrow-window-with-a-rather-long-container-group-name-0001');
    expect(await waitForEnd(id)).toBe('Completed');
    const page = await signedIn(operatorKey, { width: 800 });
    await rows(page).nth(1).waitFor();
    expect(await overflowOf(page)).toBeLessThanOrEqual(0);
    await shoot(page, 'orchestrations-800');
    await page.locator(`a[href="#/orchestrations/${id}"]`).click();
    await page.getByRole('heading', { name: 'Polls' }).waitFor();
    expect(await overflowOf(page)).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: 'Certificates' }).click();
    await page.locator('table.certificates tbody tr').nth(1).waitFor();
    expect(await overflowOf(page)).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('heading', { name: 'Dependencies' }).waitFor();
    expect(await overflowOf(page)).toBeLessThanOrEqual(0);
    await page.context().close();
  });

  it('works at console/ (a trailing slash): styled, and past "Loading..."', async () => {
    const page = await newConsolePage(browser);
    await page.goto(`${gateway.api('console')}/#/health`);
    await page.getByLabel('Function key').waitFor({ timeout: 10_000 });
    await expect(page.locator('#view').textContent()).resolves.not.toContain('Loading...');
    const headerColour = await page.evaluate(() => {
      const page = globalThis as unknown as BrowserGlobals;
      return page.getComputedStyle(page.document.querySelector('header')!).backgroundColor;
    });
    expect(headerColour).toBe('rgb(31, 42, 55)');
    await page.keyboard.type(readerKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dependencies' }).waitFor();
    await page.context().close();
  });

  it('opens with no error in the browser console: its icon is in the page, no favicon 404', async () => {
    // A browser of its own: one that opened the console before remembers it found no icon, and asks no more.
    const fresh = await launchChromium();
    const page = await newConsolePage(fresh);
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(gateway.api('console'), { waitUntil: 'load' });
    await page.getByLabel('Function key').waitFor();
    // The browser asks for the icon after the page loaded.
    await page.waitForTimeout(1000);
    expect(errors).toEqual([]);
    await expect(page.locator('link[rel="icon"]').getAttribute('href')).resolves.toMatch(/^data:image\/svg\+xml,/);
    await fresh.close();
  });
});

describe('the operator console on list answers the test makes', () => {
  const minute = 60_000;
  const base = Date.now() - 30 * minute;
  const fakeSubscription = '11111111-2222-3333-4444-555555555555';

  /** A list entry created `minutes` after `base`, acting on `path`. */
  const entry = (minutes: number, path: string, runtimeStatus = 'Completed') => ({
    id: randomUUID(),
    name: path.endsWith('/migrateToStv2') ? 'ApiManagementService_MigrateToStv2' : 'ContainerGroups_CreateOrUpdate',
    runtimeStatus,
    createdTime: new Date(base + minutes * minute).toISOString(),
    lastUpdatedTime: new Date(base + minutes * minute + 5000).toISOString(),
    endedTime: runtimeStatus === 'Running' ? undefined : new Date(base + minutes * minute + 5000).toISOString(),
    startedBy: 'key:0123456789ab',
    path,
  });
  type Entry = ReturnType<typeof entry>;
  const groupPath = (name: string, provider = 'Vendor') =>
    `subscriptions/${fakeSubscription}/resourceGroups/rg-shop/providers/${provider}.ContainerInstance/containerGroups/${name}`;

  /** Answers the page's list reads (paged by `top` and the continuation token, as the API pages) and its reads of one document. */
  async function answerList(page: Page, entries: Entry[]): Promise<void> {
    await page.route(/\/api\/orchestrations(\/[^/?]+)?(\?|$)/, async (route) => {
      const url = new URL(route.request().url());
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        route.fulfill({ status, contentType: 'application/json', headers, body: JSON.stringify(body) });
      if (url.pathname.endsWith('/orchestrations')) {
        const from = Number((await route.request().headerValue('x-ms-continuation-token')) ?? 0);
        const to = from + Number(url.searchParams.get('top') ?? 100);
        const value = entries.slice(from, to).map(({ path: _path, ...listed }) => listed);
        return json(200, { value }, to < entries.length ? { 'x-ms-continuation-token': String(to) } : {});
      }
      const found = entries.find((each) => url.pathname.endsWith(`/${each.id}`));
      if (!found) return json(404, { error: { code: 'NotFound', message: 'No such orchestration.' } });
      const { path, ...listed } = found;
      return json(200, {
        ...listed,
        input: { method: 'PUT', path, query: [] },
        output: null,
        customStatus: null,
        failure: null,
        nextPollTime: null,
        pollCount: 1,
        deadlineTime: null,
        notifications: [],
      });
    });
  }

  it("cuts the histogram into buckets from the data's span: starts a few minutes apart fall in several bars", async () => {
    const spread = [0, 1.2, 2.5, 3.7, 5, 6].map((minutes, index) => entry(minutes, groupPath(`shop-worker-${index}`)));
    const page = await signedIn(operatorKey, { prepare: (opened) => answerList(opened, spread) });
    await page.locator('.histogram').waitFor();
    const bars = await page.locator('.histogram rect').evaluateAll((rects) => rects.map((rect) => rect.getAttribute('x')));
    expect(new Set(bars).size).toBe(6);
    await expect(page.locator('.histogram figcaption').textContent()).resolves.toMatch(
      /^Starts by status, a bar per 30 seconds: 0 Pending, 0 Running, 6 Completed/,
    );
    await page.context().close();
  });

  it('says when more orchestrations match than it reads (CONSOLE_HISTOGRAM_MAX_STARTS), newest first among those read', async () => {
    const many = Array.from({ length: 14 }, (_, index) => entry(index, groupPath(`shop-batch-${index}`)));
    const page = await signedIn(operatorKey, { prepare: (opened) => answerList(opened, many) });
    await page.locator('.histogram[data-total="10"]').waitFor();
    await expect(page.locator('.histogram figcaption').textContent()).resolves.toMatch(/^Starts by status \(the first 10 read only\)/);
    await expect(page.locator('.read-limit').textContent()).resolves.toContain('More orchestrations match than the 10 the console reads');
    await shownIds(page, [many[9]!.id, many[8]!.id]);
    await page.context().close();
  });

  it('links to the Azure portal for Microsoft.* resources only, at the resource rather than its action', async () => {
    const group = entry(1, groupPath('shop-web', 'Microsoft'));
    const migration = entry(2, `subscriptions/${fakeSubscription}/resourceGroups/rg-api/providers/Microsoft.ApiManagement/service/apim-shop/migrateToStv2`);
    const page = await signedIn(operatorKey, { prepare: (opened) => answerList(opened, [group, migration]) });
    const migrationTarget = page.locator(`tr[data-id="${migration.id}"] td`).nth(6);
    await expect(migrationTarget.locator('.resource-name').textContent()).resolves.toBe('apim-shop');
    await expect(migrationTarget.locator('.resource-group').textContent()).resolves.toBe('rg-api');
    const portalLink = page.getByRole('link', { name: 'Open the resource in the Azure portal' });
    for (const [opened, resourceId] of [
      [group, `/${group.path}`],
      [migration, `/subscriptions/${fakeSubscription}/resourceGroups/rg-api/providers/Microsoft.ApiManagement/service/apim-shop`],
    ] as const) {
      await page.locator(`a[href="#/orchestrations/${opened.id}"]`).click();
      await expect(portalLink.getAttribute('href')).resolves.toBe(`https://portal.azure.com/#resource${resourceId}`);
      await page.getByRole('link', { name: 'Back to the list' }).click();
      await page.locator('table.orchestrations').waitFor();
    }
    await page.context().close();
  });
});

it('ran without a script error or a Content-Security-Policy violation in any view', () => {
  expect(pageProblems).toEqual([]);
});
