/**
 * The screenshot of the docs (docs/console.png, in the README) is a realistic local session, not
 * test data: the seed `npm run console-screenshot` makes holds no probe and no test name, the
 * committed image is that tool's drawing (the record it keeps in the PNG matches the image's data
 * and the seed), and the same session seeded again shows the same rows, newest first, with no
 * test data anywhere on the page.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium, newConsolePage, signIn } from '../../tools/harness/consoleBrowser';
import { imageDigestOf, recordOf, shownRows, testDataPattern, type ShownRow } from '../../tools/harness/consoleScreenshotRecord';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { seedLocalSession, sessionEmulator, sessionKey, sessionSettings, sessionStarts } from '../../tools/harness/localConsoleSession';

jest.setTimeout(120_000);

const screenshot = readFileSync(resolve(__dirname, '..', '..', 'docs', 'console.png'));
/** What the list shows of the session, newest first: the resource, its group, the status. */
const expected = [...sessionStarts].reverse().map(({ resource, group, status }) => ({ resource, group, status }));
const summaryOf = (rows: ShownRow[]) => rows.map(({ resource, group, status }) => ({ resource, group, status }));

describe("the docs' screenshot of the console", () => {
  it('is seeded with realistic data: no markup probe, no test name', () => {
    expect(JSON.stringify(sessionStarts)).not.toMatch(testDataPattern);
    expect(sessionStarts.map((start) => start.at)).toEqual([...sessionStarts.map((start) => start.at)].sort((a, b) => a - b));
    expect(sessionStarts.filter((start) => start.status === 'Failed')).toHaveLength(1);
    expect(sessionStarts.filter((start) => start.status === 'Running')).toHaveLength(1);
  });

  it("is the tool's drawing of that session: its record matches the image and the seed, and holds no test data", () => {
    const record = recordOf(screenshot);
    expect(record).toBeDefined();
    expect(record!.imageSha256).toBe(imageDigestOf(screenshot));
    expect(screenshot.readUInt32BE(16)).toBe(record!.width);
    expect(JSON.stringify(record)).not.toMatch(testDataPattern);
    expect(summaryOf(record!.rows)).toEqual(expected);
    expect(record!.rows.find((row) => row.status === 'Failed')?.lastError).toMatch(/^DeploymentFailed: /);
    expect(record!.histogram).toMatch(/^Starts by status, a bar per /);
  });

  describe('seeded again', () => {
    let gateway: GatewayFixture;
    let browser: Browser;
    beforeAll(async () => {
      gateway = await startGateway(sessionSettings, sessionEmulator);
      browser = await launchChromium();
      await seedLocalSession(gateway.api, 0);
    });
    afterAll(async () => {
      await browser?.close();
      await gateway?.stop();
    });

    it('shows the same rows, newest first, with readable resource names and no test data on the page', async () => {
      const page = await newConsolePage(browser);
      await signIn(page, gateway.api('console'), sessionKey);
      await page
        .locator('table.orchestrations tbody tr')
        .nth(sessionStarts.length - 1)
        .waitFor();
      await page.locator('.table-area[aria-busy="false"]').waitFor();
      const rows = await shownRows(page);
      expect(summaryOf(rows)).toEqual(expected);
      expect(rows.map(({ operation, lastError }) => ({ operation, lastError }))).toEqual(
        recordOf(screenshot)!.rows.map(({ operation, lastError }) => ({ operation, lastError })),
      );
      expect(await page.locator('body').innerText()).not.toMatch(testDataPattern);
    });
  });
});
