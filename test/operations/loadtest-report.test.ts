// The load-test kit's report on a small fixed input: a self-contained HTML page (nothing fetched from anywhere, no
// script) with the two SVG charts and the exact figures, and the JSON beside it.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { renderHtml } from '../../loadtest/report-html.js';
import { type LoadReport, LoadReportSchema, basicIsoTime, writeReport } from '../../loadtest/report.js';

const REPORT: LoadReport = {
  scenario: 'paid',
  description: 'POST /api/v1/router/route paying the merchant; a success is a 200 "paid" & <Settled>',
  startedAt: '2026-11-25T10:15:00.123Z',
  finishedAt: '2026-11-25T10:15:04.500Z',
  settings: {
    durationSeconds: 4,
    connections: 16,
    db: 'sqlite',
    endpoints: {
      proxy: '127.0.0.1:8080',
      admin: '127.0.0.1:8081',
      upstream: '127.0.0.1:9101',
      merchant: '127.0.0.1:9100',
    },
  },
  interrupted: false,
  summary: {
    seconds: 4.002,
    requests: 1237,
    ok: 1234,
    failed: 3,
    rate: 308.3458,
    latency: { min: 12.5, mean: 48.123, p50: 47.25, p90: 60.5, p99: 88.9, max: 140 },
  },
  perSecond: [
    { second: 0, ok: 300, failed: 0, p50: 45, p99: 80 },
    { second: 1, ok: 312, failed: 1, p50: 47.5, p99: 90 },
    { second: 2, ok: 320, failed: 2, p50: 48, p99: 88 },
    { second: 3, ok: 302, failed: 0, p50: 47, p99: 86.25 },
  ],
  histogram: {
    bins: [
      { from: 0, to: 25, count: 10 },
      { from: 25, to: 50, count: 900 },
      { from: 50, to: 75, count: 300 },
      { from: 75, to: 100, count: 23 },
    ],
    overflow: { from: 100, to: 140, count: 1 },
  },
  errors: [
    { message: '/api/v1/router/route answered {"paid":false} <b>', count: 2 },
    { message: 'HTTP 502', count: 1 },
  ],
  passed: false,
};

/** Tags left open or closed out of order (void <meta> and self-closed SVG elements aside). */
function unbalanced(html: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)\b[^>]*?(\/?)>/g)) {
    const [, close, name = '', self] = m;
    const tag = name.toLowerCase();
    if (self === '/' || tag === 'meta') continue;
    if (close === '/') {
      const open = stack.pop();
      if (open !== tag) problems.push(`</${tag}> closes <${open}>`);
    } else stack.push(tag);
  }
  return [...problems, ...stack.map((tag) => `<${tag}> left open`)];
}

const count = (s: string, part: string): number => s.split(part).length - 1;

test('the fixed input is a valid report', (t) => {
  t.notThrows(() => LoadReportSchema.parse(REPORT));
});

test('the page is self-contained: no URL, no script, no external asset; its tags balance', (t) => {
  const html = renderHtml(REPORT);
  t.true(html.startsWith('<!doctype html>\n<html lang="en">'));
  t.notRegex(html, /https?:\/\//i);
  t.notRegex(html, /<script|<link|<img|<iframe|<object|\ssrc=|\shref=|url\(|@import/i);
  t.deepEqual(unbalanced(html), []);
  t.is(count(html, '<svg class="chart"'), 2);
  t.is(count(html, '</svg>'), 2);
});

test('the summary shows the exact figures; text is escaped', (t) => {
  const html = renderHtml(REPORT);
  t.true(html.includes('<h1>Load test: paid <span class="verdict fail">FAIL</span></h1>'));
  for (const cell of [
    '<th scope="row">Requests</th><td>1,237</td>',
    '<th scope="row">Successful</th><td>1,234</td>',
    '<th scope="row">Failed (non-2xx, failed checks, connection errors)</th><td>3</td>',
    '<th scope="row">Throughput</th><td>308.3 successful calls/s</td>',
    '<th scope="row">Latency min / mean</th><td>12.50 / 48.12 ms</td>',
    '<th scope="row">Latency p50 / p90 / p99</th><td>47.25 / 60.50 / 88.90 ms</td>',
    '<th scope="row">Latency max</th><td>140.00 ms</td>',
    '<th scope="row">Load</th><td>4.0 s measured of 4 s asked</td>',
    '<th scope="row">Connections</th><td>16</td>',
    '<th scope="row">Proxy / admin</th><td>127.0.0.1:8080 / 127.0.0.1:8081</td>',
    '<td class="num">2</td><td><code>/api/v1/router/route answered {&quot;paid&quot;:false} &lt;b&gt;</code></td>',
    '<tr><td class="num">1</td><td class="num">312</td><td class="num">1</td><td class="num">47.50</td><td class="num">90.00</td></tr>',
  ]) {
    t.true(html.includes(cell), cell);
  }
  t.true(html.includes('a success is a 200 &quot;paid&quot; &amp; &lt;Settled&gt;'));
  t.false(html.includes('<b>'));
  t.false(html.includes('<Settled>'));
});

test('the throughput chart: a bar per second, failures stacked in red, a round axis; each bar its tooltip', (t) => {
  const html = renderHtml(REPORT);
  const [throughput = ''] = html.split('<h2>Latency histogram</h2>');
  // 4 seconds, two of them with failures; the busiest second (322 calls) under an axis ending at 500.
  t.is(count(throughput, 'class="ok"'), 4);
  t.is(count(throughput, 'class="failed"'), 2);
  t.true(throughput.includes('dy="0.32em">500</text>'));
  t.true(throughput.includes('<title>second 1: 312 ok, 1 failed, p50 47.50 ms, p99 90.00 ms</title>'));
  // The last of the 4 buckets covers a whole second here (4.002 s); when it covers less, the page says so.
  t.false(throughput.includes('The last bar covers'));
  const short = renderHtml({ ...REPORT, summary: { ...REPORT.summary, seconds: 3.4 } });
  t.true(short.includes('<p class="muted">The last bar covers only the last 0.4 s of the load.</p>'));
});

test('the latency histogram: a bar per bin and one for the overflow; each bar its tooltip', (t) => {
  const html = renderHtml(REPORT);
  const histogram = html.split('<h2>Latency histogram</h2>')[1]?.split('<h2>Errors</h2>')[0] ?? '';
  t.is(count(histogram, 'class="ok"'), 4);
  t.is(count(histogram, 'class="over"'), 1);
  t.true(histogram.includes('dy="0.32em">1,000</text>'));
  t.true(histogram.includes('<title>25.00 to 50.00 ms: 900 calls</title>'));
  t.true(histogram.includes('<title>above 100.00 ms (up to 140.00 ms): 1 call</title>'));
});

test('writeReport writes <scenario>-<basic ISO time>.html and .json side by side; the JSON is the report', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'loadtest-report-'));
  try {
    t.is(basicIsoTime(REPORT.startedAt), '20261125T101500Z');
    const paths = writeReport(REPORT, join(dir, 'results'));
    t.is(paths.html, join(dir, 'results', 'paid-20261125T101500Z.html'));
    t.is(paths.json, join(dir, 'results', 'paid-20261125T101500Z.json'));
    t.deepEqual(readdirSync(join(dir, 'results')).sort(), ['paid-20261125T101500Z.html', 'paid-20261125T101500Z.json']);
    t.deepEqual(LoadReportSchema.parse(JSON.parse(readFileSync(paths.json, 'utf8'))), REPORT);
    t.is(readFileSync(paths.html, 'utf8'), renderHtml(REPORT));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
