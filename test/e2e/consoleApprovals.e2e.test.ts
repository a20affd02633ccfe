/**
 * The console's Approvals view in headless Chromium (../helpers/consoleBrowser.ts) against the
 * built app on the local host with the emulator and Azurite: an approver sees the starts waiting
 * for approval and approves one, rejects another with a reason (each recorded with the route
 * `console`); a caller no rule names as an approver sees the request at `#/approvals/<id>` (and
 * `#approval=<id>`) without the buttons, and the API refuses its decision anyway.
 */
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { keyFingerprintOf } from '../../src/callers/callerIdentity';
import { launchChromium, newConsolePage, signIn } from '../../tools/harness/consoleBrowser';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

jest.setTimeout(120_000);

const subscription = '00000000-0000-0000-0000-000000000000';
const keys = { starter: 'approvals-starter-key-0001', approver: 'approvals-approver-key-0001', reader: 'approvals-reader-key-0001' };

let gateway: GatewayFixture;
let browser: Browser;
const pageProblems: string[] = [];

async function api(method: string, path: string, key: string, body?: unknown) {
  const response = await request(gateway.api(path), {
    method,
    headers: { 'x-functions-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** A migration the starter's rule holds for approval: its id. */
async function waitingMigration(service: string): Promise<string> {
  const started = await api(
    'POST',
    `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ApiManagement/service/${service}/migrateToStv2?api-version=2024-05-01`,
    keys.starter,
    { mode: 'PreserveIp' },
  );
  expect(started.status).toBe(202);
  const id = started.headers['x-orchestration-id'] as string;
  const status = await api('GET', `orchestrations/${id}`, keys.starter);
  expect(status.body).toMatchObject({ runtimeStatus: 'Pending', customStatus: { approval: { state: 'waiting' } } });
  return id;
}

const approvalOf = async (id: string) =>
  ((await api('GET', `orchestrations/${id}`, keys.starter)).body.customStatus as { approval?: unknown } | null)?.approval;

/** Signed in at the Approvals view (an approver that started nothing has no orchestrations list to draw). */
async function signedIn(key: string, at = '#/approvals'): Promise<Page> {
  const page = await newConsolePage(browser);
  page.on('pageerror', (error) => pageProblems.push(`${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (403|404)/.test(message.text())) pageProblems.push(message.text());
  });
  await signIn(page, `${gateway.api('console')}${at}`, key, '#sign-out:not([hidden])');
  return page;
}

/** The page's globals, for a function run in the browser (the tests' TypeScript has no DOM types). */
interface BrowserGlobals {
  sessionStorage: { getItem(name: string): string | null };
  location: { pathname: string };
  fetch(url: string, init: object): Promise<{ status: number; json(): Promise<unknown> }>;
}

beforeAll(async () => {
  gateway = await startGateway({
    LOCAL_HOST_KEYS: JSON.stringify(keys),
    LOCAL_HOST_TIMERS: 'off',
    ACCESS_POLICY: JSON.stringify([
      {
        callers: [keyFingerprintOf(keys.starter)],
        allow: ['ApiManagementService_MigrateToStv2', 'read'],
        approval: { count: 1, approvers: [keyFingerprintOf(keys.approver)] },
      },
      { callers: [keyFingerprintOf(keys.approver)], allow: ['read'] },
      // Sees every orchestration, approves none.
      { callers: [keyFingerprintOf(keys.reader)], allow: ['read', 'admin'] },
    ]),
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

describe('the Approvals view', () => {
  const ids = { approved: '', rejected: '' };
  beforeAll(async () => {
    ids.approved = await waitingMigration('apim-console-approve');
    ids.rejected = await waitingMigration('apim-console-reject');
  });

  it('shows a caller that may not approve the waiting request, without the buttons; the API refuses its decision anyway', async () => {
    const reader = await signedIn(keys.reader, `#/approvals/${ids.approved}`);
    const row = reader.locator(`table.approvals tbody tr[data-id="${ids.approved}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('0 of 1');
    await expect(reader.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await expect(reader.getByRole('button', { name: 'Reject' }).count()).resolves.toBe(0);
    // The other link form opens the same request.
    await reader.evaluate((hash) => ((globalThis as unknown as { location: { hash: string } }).location.hash = hash), `#approval=${ids.rejected}`);
    await reader.locator(`table.approvals tbody tr[data-id="${ids.rejected}"]`).waitFor();
    const refused = await reader.evaluate(async (id) => {
      const page = globalThis as unknown as BrowserGlobals;
      const key = page.sessionStorage.getItem('management-gateway-console-key') ?? '';
      const response = await page.fetch(`${page.location.pathname.replace(/console$/, '')}orchestrations/${id}/raiseEvent/Approval`, {
        method: 'POST',
        headers: { 'x-functions-key': key, 'content-type': 'application/json', 'x-gateway-client': 'console' },
        body: JSON.stringify({ approved: true }),
      });
      return response.status;
    }, ids.approved);
    expect([403, 404]).toContain(refused);
    await expect(approvalOf(ids.approved)).resolves.toMatchObject({ state: 'waiting', decisions: [] });
    await reader.context().close();
  });

  it('lets an approver see both waiting requests and approve one: recorded as made through the console', async () => {
    const approver = await signedIn(keys.approver, `#/approvals/${ids.approved}`);
    await approver.locator(`table.approvals tbody tr[data-id="${ids.approved}"]`).waitFor();
    await approver.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Approvals' }).click();
    const row = approver.locator(`table.approvals tbody tr[data-id="${ids.approved}"]`);
    await row.waitFor();
    await approver.locator(`table.approvals tbody tr[data-id="${ids.rejected}"]`).waitFor();
    await expect(row.textContent()).resolves.toContain(keyFingerprintOf(keys.starter));
    await row.getByRole('button', { name: 'Approve' }).click();
    await approver.locator('dialog.confirm').getByRole('button', { name: 'Approve' }).click();
    await approver.locator(`table.approvals tbody tr[data-id="${ids.approved}"]`).waitFor({ state: 'detached' });
    await expect(approvalOf(ids.approved)).resolves.toMatchObject({
      state: 'approved',
      decisions: [{ by: keyFingerprintOf(keys.approver), approved: true, route: 'console' }],
    });
    await approver.context().close();
  });

  it('lets an approver reject with a reason, and shows the decided request at its page', async () => {
    const approver = await signedIn(keys.approver, `#/approvals/${ids.rejected}`);
    const row = approver.locator(`table.approvals tbody tr[data-id="${ids.rejected}"]`);
    await row.waitFor();
    await row.getByRole('textbox').fill('not during the <b>freeze</b>');
    await row.getByRole('button', { name: 'Reject' }).click();
    await approver.locator('dialog.confirm').getByRole('button', { name: 'Reject' }).click();
    await expect(approver.locator(`table.approvals tbody tr[data-id="${ids.rejected}"] ul.decisions`).textContent({ timeout: 30_000 })).resolves.toContain(
      'not during the <b>freeze</b>',
    );
    await expect(approver.locator(`table.approvals tbody tr[data-id="${ids.rejected}"]`).textContent()).resolves.toContain('(console)');
    await expect(approvalOf(ids.rejected)).resolves.toMatchObject({
      state: 'rejected',
      decisions: [{ approved: false, reason: 'not during the <b>freeze</b>', route: 'console' }],
    });
    await approver.context().close();
  });
});

it('ran without a script error or a Content-Security-Policy violation', () => {
  expect(pageProblems).toEqual([]);
});
