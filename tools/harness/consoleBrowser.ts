/**
 * The operator console in Debian's Chromium, driven by playwright-core: for the console's
 * browser tests and for tools/consoleScreenshot.ts, which draws docs/console.png the same way.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const chromiumPath = process.env.CONSOLE_TEST_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: the console's browser tests need Debian's package (run \`apt-get install -y chromium\` as root, as .ci/run does), or set CONSOLE_TEST_CHROMIUM to a Chromium executable.`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A page of its own context (its own sessionStorage), `width` pixels wide. */
export async function newConsolePage(browser: Browser, width = 1400, height = 900): Promise<Page> {
  return (await browser.newContext({ viewport: { width, height } })).newPage();
}

/** Opens the console at `consoleUrl` and signs in by keyboard (the key field has the focus, Enter signs in); resolves once `drawn` (by default the list) is. */
export async function signIn(page: Page, consoleUrl: string, key: string, drawn = 'table.orchestrations'): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByLabel('Function key').waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.locator(drawn).waitFor();
}
