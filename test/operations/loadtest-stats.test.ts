// The load-test kit's figures on fixed input: percentiles, the latency histogram, a run's per-second buckets and
// rate (under a clock the test moves), the progress line and the command line.
import test from 'ava';
import { fmtFixed, fmtInt } from '../../loadtest/format.js';
import { UsageError, parseRunArgs, parseStackArgs } from '../../loadtest/options.js';
import { progressLine } from '../../loadtest/progress.js';
import { Recorder, histogram, latencySummary, niceCeil, percentile } from '../../loadtest/stats.js';

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

test('percentile is the nearest rank: of 1..100, p50 = 50, p99 = 99, p100 = 100; of one value, that value', (t) => {
  const v = oneTo(100);
  t.is(percentile(v, 50), 50);
  t.is(percentile(v, 90), 90);
  t.is(percentile(v, 99), 99);
  t.is(percentile(v, 100), 100);
  t.is(percentile(v, 0), 1);
  t.is(percentile([7], 99), 7);
  t.true(Number.isNaN(percentile([], 50)));
  // 1..10: rank ceil(0.5 * 10) = 5, ceil(0.99 * 10) = 10.
  t.is(percentile(oneTo(10), 50), 5);
  t.is(percentile(oneTo(10), 99), 10);
});

test('latencySummary of 1..100 ms: min 1, mean 50.5, p50 50, p90 90, p99 99, max 100; none: null', (t) => {
  t.deepEqual(latencySummary(oneTo(100)), { min: 1, mean: 50.5, p50: 50, p90: 90, p99: 99, max: 100 });
  t.is(latencySummary([]), null);
});

test('niceCeil: the next 1, 2, 2.5 or 5 times a power of ten', (t) => {
  t.deepEqual(
    [0.3, 2.5000000000000004, 4.95, 5, 7, 99, 101, 0, -3].map(niceCeil),
    [0.5, 2.5, 5, 5, 10, 100, 200, 1, 1],
  );
});

test('histogram of 1..100 ms: 20 bins of 5 ms, the last holding its end; no overflow', (t) => {
  const h = histogram(oneTo(100));
  t.is(h.bins.length, 20);
  t.deepEqual(h.bins[0], { from: 0, to: 5, count: 4 });
  t.deepEqual(h.bins[1], { from: 5, to: 10, count: 5 });
  t.deepEqual(h.bins[19], { from: 95, to: 100, count: 6 });
  t.is(
    h.bins.reduce((a, b) => a + b.count, 0),
    100,
  );
  t.is(h.overflow, null);
  t.deepEqual(histogram([]), { bins: [], overflow: null });
});

test('histogram: the bins stop at the first round edge above the maximum (20 to 1180 ms: 12 bins of 100 ms)', (t) => {
  const h = histogram(oneTo(59).map((i) => i * 20));
  t.is(h.bins.length, 12);
  t.deepEqual(h.bins[0], { from: 0, to: 100, count: 4 });
  t.deepEqual(h.bins[11], { from: 1100, to: 1200, count: 5 });
  t.is(
    h.bins.reduce((a, b) => a + b.count, 0),
    59,
  );
  t.is(h.overflow, null);
});

test('histogram: a straggler beyond four times the p99 goes to the overflow, the bins span the p99', (t) => {
  const h = histogram([...oneTo(99), 1000]);
  t.is(h.bins.at(-1)?.to, 100);
  t.deepEqual(h.overflow, { from: 100, to: 1000, count: 1 });
  t.is(
    h.bins.reduce((a, b) => a + b.count, 0),
    99,
  );
});

test('Recorder: per-second buckets, their percentiles, the rate, the errors by message, on a clock the test moves', (t) => {
  let now = 1000;
  const r = new Recorder(() => now);
  // Second 0: 4 successes (10, 20, 30, 40 ms) and a failure.
  for (const ms of [10, 20, 30, 40]) r.ok(ms);
  r.fail('HTTP 502');
  t.is(r.done, 5);
  // Second 1: two successes; second 2: none; second 3: one success and two failures.
  now = 2000;
  r.ok(5);
  r.ok(15);
  now = 4500;
  r.ok(100);
  r.fail('HTTP 502');
  r.fail('/api/v1/router/route answered {"paid":false}');
  now = 5000;
  const f = r.finish();
  t.is(f.seconds, 4);
  t.is(f.ok, 7);
  t.is(f.failed, 3);
  t.is(f.rate, 7 / 4);
  t.deepEqual(f.perSecond, [
    { second: 0, ok: 4, failed: 1, p50: 20, p99: 40 },
    { second: 1, ok: 2, failed: 0, p50: 5, p99: 15 },
    { second: 2, ok: 0, failed: 0, p50: null, p99: null },
    { second: 3, ok: 1, failed: 2, p50: 100, p99: 100 },
  ]);
  // 5 10 15 20 30 40 100: mean 220 / 7.
  t.deepEqual(f.latency, { min: 5, mean: 31.429, p50: 20, p90: 100, p99: 100, max: 100 });
  t.deepEqual(f.errors, [
    { message: 'HTTP 502', count: 2 },
    { message: '/api/v1/router/route answered {"paid":false}', count: 1 },
  ]);
});

test('Recorder.window: the rate and percentiles since the previous window, the totals since the start', (t) => {
  let now = 0;
  const r = new Recorder(() => now);
  for (const ms of [1, 2, 3, 4]) r.ok(ms);
  now = 2000;
  t.deepEqual(r.window(), { elapsedSeconds: 2, ok: 4, failed: 0, rate: 2, p50: 2, p99: 4 });
  r.ok(9);
  r.fail('boom');
  now = 3000;
  t.deepEqual(r.window(), { elapsedSeconds: 3, ok: 1, failed: 1, rate: 1, p50: 9, p99: 9 });
  t.is(r.done, 6);
  t.is(r.failed, 1);
});

test('progressLine and the number formats', (t) => {
  t.is(
    progressLine('paid', 30, 12_345, 2, { elapsedSeconds: 12.4, ok: 290, failed: 0, rate: 290.4, p50: 52.25, p99: 88 }),
    'paid 12/30 s | 12,345 done | 290/s | p50 52.25 ms | p99 88.00 ms | 2 errors',
  );
  t.is(
    progressLine('relay', 3, 0, 0, {
      elapsedSeconds: 0.4,
      ok: 0,
      failed: 0,
      rate: 0,
      p50: Number.NaN,
      p99: Number.NaN,
    }),
    'relay 0/3 s | 0 done | 0/s | p50 - | p99 - | 0 errors',
  );
  t.is(fmtInt(1_234_567), '1,234,567');
  t.is(fmtInt(999), '999');
  t.is(fmtFixed(9837.24, 1), '9,837.2');
  t.is(fmtFixed(-1234.5, 2), '-1,234.50');
});

test('the command line: defaults are the fixed ports; flags win over LOADTEST_* variables; bad input is refused', (t) => {
  const a = parseRunArgs(['paid'], {});
  t.like(a, {
    scenario: 'paid',
    duration: 30,
    db: 'sqlite',
    ports: { proxy: 8080, admin: 8081, upstream: 9101, merchant: 9100 },
  });
  t.is(a?.connections, undefined);
  t.like(
    parseRunArgs(['relay', '--duration', '3', '--connections', '8', '--proxy-port', '18080', '--db', 'postgresql'], {
      LOADTEST_PROXY_PORT: '28080',
      LOADTEST_ADMIN_PORT: '28081',
    }),
    { scenario: 'relay', duration: 3, connections: 8, db: 'postgresql', ports: { proxy: 18080, admin: 28081 } },
  );
  t.is(parseRunArgs(['--help'], {}), null);
  t.like(parseStackArgs(['--merchant-port', '0'], {}), { ports: { proxy: 8080, merchant: 0 } });
  t.throws(() => parseRunArgs(['soak'], {}), { instanceOf: UsageError, message: /scenario/ });
  t.throws(() => parseRunArgs([], {}), { instanceOf: UsageError, message: /one scenario expected/ });
  t.throws(() => parseRunArgs(['relay', '--duration', '0'], {}), { instanceOf: UsageError, message: /duration/ });
  t.throws(() => parseRunArgs(['relay', '--proxy-port', '70000'], {}), { instanceOf: UsageError });
  t.throws(() => parseRunArgs(['relay', '--bogus'], {}), { instanceOf: UsageError });
  t.throws(() => parseStackArgs(['--duration', '3'], {}), { instanceOf: UsageError, message: /--duration/ });
});
