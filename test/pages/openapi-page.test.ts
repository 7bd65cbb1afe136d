// The API reference page (GET /docs) in headless Chromium: RapiDoc, served by this service, renders the operations of
// /api/v1/openapi.json under the page's strict Content-Security-Policy, asks nothing of another origin and breaks no
// rule of the policy.
import test from 'ava';
import type { Browser } from 'playwright-core';
import {
  CHROMIUM_MISSING,
  chromiumAvailable,
  closeBrowser,
  launchBrowser,
  newContext,
  newPage,
} from '../support/browser.js';
import { type Stack, startStack } from '../support/stack.js';

const available = chromiumAvailable();
let stack: Stack | undefined;
let browser: Browser | undefined;

test.before(async () => {
  if (!available) return;
  stack = await startStack('sqlite');
  browser = await launchBrowser();
});
test.after.always(async () => {
  try {
    await closeBrowser(browser);
  } finally {
    await stack?.stop();
  }
});

const register = available ? test : (title: string) => test(title, (t) => t.fail(CHROMIUM_MISSING));

register('/docs answers the page with a strict Content-Security-Policy, public, through the proxy', async (t) => {
  if (stack === undefined) throw new Error('stack not started');
  const r = await fetch(`${stack.proxyUrl}/docs`);
  t.is(r.status, 200);
  t.is(r.headers.get('content-type'), 'text/html; charset=utf-8');
  // The required directives, and only what RapiDoc was measured to need beside them (admin/openapi/reference-page.ts).
  const csp = (r.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
  t.deepEqual(csp.sort(), [
    "base-uri 'none'",
    "connect-src 'self'",
    "default-src 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    'img-src data:',
    "script-src 'self'",
    "style-src-attr 'unsafe-inline'",
    "style-src-elem 'unsafe-inline'",
  ]);
  const page = await r.text();
  t.regex(page, /<rapi-doc spec-url="\/api\/v1\/openapi\.json"/);
  const script = await fetch(`${stack.proxyUrl}/docs/rapidoc-min.js`);
  t.is(script.status, 200);
  t.is(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.true((await script.arrayBuffer()).byteLength > 100_000, 'the RapiDoc bundle');
});

register('in Chromium the page renders the operations, from this origin only, with no CSP violation', async (t) => {
  if (stack === undefined || browser === undefined) throw new Error('stack not started');
  const origin = new URL(stack.proxyUrl).origin;
  const context = await newContext(browser);
  try {
    const page = await newPage(context);
    const requests: string[] = [];
    const violations: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    page.on('console', (m) => {
      if (/Content[- ]Security[- ]Policy/i.test(m.text())) violations.push(m.text());
    });
    // Every violation, including those the console does not show (a blocked style attribute, a font).
    // (Page-side code as a string: the tests compile without the DOM's types.)
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        console.error('Content-Security-Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
    });
    const answer = await page.goto(`${stack.proxyUrl}/docs`);
    t.is(answer?.status(), 200);
    // RapiDoc renders in its shadow DOM; playwright's locators pierce it.
    await page.getByText('Order a plan').first().waitFor({ timeout: 60_000 });
    for (const summary of ['Token endpoint', 'Call a merchant and pay its 402 (mode B)', 'Create an organization']) {
      t.true(await page.getByText(summary).first().isVisible(), summary);
    }
    t.true(requests.includes(`${origin}/api/v1/openapi.json`), 'the page loaded the document');
    t.deepEqual(
      requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin),
      [],
      'no request to another origin',
    );
    t.deepEqual(violations, []);
  } finally {
    await closeBrowser(undefined, [context]);
  }
});
