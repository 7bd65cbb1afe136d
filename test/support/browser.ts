// Headless Chromium for the page tests: playwright-core driving Debian's chromium (no browser download here).
// Under CI=true a missing browser fails the run; elsewhere the page tests are a loud, counted skip.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`Chromium is required in CI and not found at ${CHROMIUM}`);
  process.stderr.write(`\n!!! Chromium not found at ${CHROMIUM}: the page tests are SKIPPED !!!\n\n`);
  return false;
}

/**
 * Headless Chromium; each test opens its own context (its own cookies: one browser, one human). The flags keep
 * Chromium from reaching out to the network on its own (which a closed network refuses) and let it run as root.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
