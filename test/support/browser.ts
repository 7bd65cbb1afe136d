// Headless Chromium for the page tests: playwright-core driving Debian's chromium (no browser download here).
// A missing browser fails the page tests (never a skip): a passing run has run them all.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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
