/**
 * `npm run console-screenshot`: draws docs/console.png, the console shown by the README and
 * docs/console.md, from a realistic local session rather than from test data. It starts the built
 * app as the end-to-end tests do (the emulator and Azurite in memory, the app in a child process
 * through the local host), makes the session's starts (tools/harness/localConsoleSession.ts) a few
 * seconds apart as an operator would, signs in to the console in Chromium 1400 px wide and saves
 * the orchestrations view, with what it shows kept in the PNG (consoleScreenshotRecord.ts) for
 * test/e2e/consoleScreenshot.e2e.test.ts to check.
 *
 * `--pace <factor>` scales the pauses between starts (1 by default, about three minutes in all;
 * 0 makes them at once, with every start in one bar of the histogram).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { launchChromium, newConsolePage, signIn } from './harness/consoleBrowser';
import { shownRows, withRecord } from './harness/consoleScreenshotRecord';
import { startGateway } from './harness/gatewayFixture';
import { seedLocalSession, sessionEmulator, sessionKey, sessionSettings, sessionStarts } from './harness/localConsoleSession';

const output = resolve('docs', 'console.png');
const width = 1400;

function paceOf(args: string[]): number {
  const at = args.indexOf('--pace');
  const pace = at === -1 ? 1 : Number(args[at + 1]);
  if (!Number.isFinite(pace) || pace < 0) throw new Error('--pace takes a factor of 0 or more (1: the session as written, 0: every start at once).');
  return pace;
}

async function main(): Promise<void> {
  const pace = paceOf(process.argv.slice(2));
  const gateway = await startGateway(sessionSettings, sessionEmulator);
  const browser = await launchChromium().catch(async (error: unknown) => {
    await gateway.stop();
    throw error;
  });
  try {
    console.log(
      `Seeding ${sessionStarts.length} starts on ${gateway.app.url}${pace > 0 ? ` over about ${Math.round((sessionStarts.at(-1)!.at * pace) / 60)} minutes` : ''}...`,
    );
    await seedLocalSession(gateway.api, pace);
    const page = await newConsolePage(browser, width, 900);
    await signIn(page, gateway.api('console'), sessionKey);
    await page
      .locator('table.orchestrations tbody tr')
      .nth(sessionStarts.length - 1)
      .waitFor();
    await page.locator('.table-area[aria-busy="false"]').waitFor();
    const rows = await shownRows(page);
    const histogram = await page.locator('.histogram figcaption').innerText();
    const png = await page.screenshot({ fullPage: true });
    writeFileSync(output, withRecord(png, { drawnBy: 'npm run console-screenshot', width, histogram, rows }));
    console.log(`Wrote ${output}: ${rows.map((row) => `${row.resource} (${row.status})`).join(', ')}`);
  } finally {
    await browser.close();
    await gateway.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
