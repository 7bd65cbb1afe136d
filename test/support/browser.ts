// Headless Chromium for the page tests: playwright-core driving Debian's chromium (no browser download here).
// A missing browser fails the page tests (never a skip): a passing run has run them all.
//
// Every wait on the browser is bounded. Playwright bounds its actions and navigations (30 s by default; raised here
// for a loaded machine), but not opening or closing a context, a page or the browser: a Chromium that stopped
// answering there once held a test run for 25 minutes.
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { within } from './bounded.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Actions and navigations: generous, a loaded 2-core machine renders slowly. */
const ACTION_LIMIT_MS = 60_000;
const LIFECYCLE_LIMIT_MS = 60_000;

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/** Why the page tests cannot run here. */
export const CHROMIUM_MISSING = `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`;

/**
 * Headless Chromium; each test opens its own context (its own cookies: one browser, one human). The flags keep
 * Chromium from reaching out to the network on its own (which a closed network refuses) and let it run as root.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 180_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A new context (a human with no cookies yet) whose actions and navigations are bounded. */
export async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await within('opening a browser context', browser.newContext(), LIFECYCLE_LIMIT_MS);
  context.setDefaultTimeout(ACTION_LIMIT_MS);
  context.setDefaultNavigationTimeout(ACTION_LIMIT_MS);
  return context;
}

export function newPage(context: BrowserContext): Promise<Page> {
  return within('opening a page', context.newPage(), LIFECYCLE_LIMIT_MS);
}

/**
 * Closes a page once what it is loading has loaded. Playwright's page.close() has no timeout, and Chromium did not
 * answer it when it came while a form's answer was still being committed as the page's document (a test that
 * waited only for the response): the run then waited for ever. Waiting for the load first avoids that; the bound
 * makes anything else of the kind fail the test, naming the wait.
 */
export async function closePage(page: Page): Promise<void> {
  await page.waitForLoadState('load');
  await within('closing a page', page.close(), LIFECYCLE_LIMIT_MS);
}

/** Closes the contexts and the browser, each within a bound; a Chromium that does not close is left to die with us. */
export async function closeBrowser(
  browser: Browser | undefined,
  contexts: readonly BrowserContext[] = [],
): Promise<void> {
  await Promise.allSettled(contexts.map((c) => within('closing a browser context', c.close(), LIFECYCLE_LIMIT_MS)));
  if (browser !== undefined) await within('closing the browser', browser.close(), LIFECYCLE_LIMIT_MS);
}
