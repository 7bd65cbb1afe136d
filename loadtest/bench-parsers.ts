// Speed of the parsers of untrusted payment headers (and of the proxy's request targets) on hostile input, as ratios to a plain header parsed in the same
// process moments before (the tests assert work and sizes only: a loaded machine stretches any time). A parser
// that backtracks or parses past its limits shows as a ratio far above the plain header's 1.
//   npm run bench:parsers     (BENCH_PARSER_ROUNDS=N for more or fewer rounds; the figure is the fastest round)
import { targetOf } from '../proxy/http/request-target.js';
import * as Challenge from '../shared/protocols/mpp/challenge.js';
import { encodeBase64 } from '../shared/protocols/encoding.js';
import { decodePaymentRequiredV1, decodePaymentRequiredV2 } from '../shared/protocols/x402-decode.js';
import wwwAuthenticateVectors from '../test/vectors/mpp-www-authenticate.json' with { type: 'json' };

const ROUNDS = Number(process.env.BENCH_PARSER_ROUNDS ?? 20);

/** A vector's wire text: a string, or a repeated pattern (as test/protocols/protocols-mpp.test.ts builds it). */
function wireOf(w: unknown): string {
  if (typeof w === 'string') return w;
  const {
    prefix = '',
    repeat = '',
    count = 0,
    suffix = '',
  } = w as {
    prefix?: string;
    repeat?: string;
    count?: number;
    suffix?: string;
  };
  return `${prefix}${repeat.repeat(count)}${suffix}`;
}

/** The fastest of ROUNDS runs of `fn` (ms): one run alone can be stretched by a GC pause or another process. */
function fastest(fn: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const plain = 'Payment id="a", realm="r", method="evm", intent="charge", request="e30"';
const option = {
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '10000',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};
const adversarial = wwwAuthenticateVectors.scenarios.find((s) => s.name === 'adversarial_unclosed_quoted_extension');
const cases: [string, () => unknown][] = [
  [
    'mpp: 12,000 backslashes (vector adversarial_unclosed_quoted_extension)',
    () => Challenge.deserializeList(wireOf(adversarial?.wire)),
  ],
  [
    'mpp: 200,000 backslashes (refused by length)',
    () => Challenge.deserializeList(`Payment x="${'\\'.repeat(200_000)}`),
  ],
  ['mpp: 5,000 escaped quotes', () => Challenge.deserialize(`${plain}, x="${'\\"'.repeat(5000)}"`)],
  [
    'x402 v2: 10,000 accepts in a header (refused by length)',
    (() => {
      const huge = encodeBase64(
        JSON.stringify({ x402Version: 2, accepts: Array.from({ length: 10_000 }, () => option) }),
      );
      return () => decodePaymentRequiredV2(huge);
    })(),
  ],
  [
    'x402 v1: 10,000 accepts in a body (refused by size)',
    (() => {
      const body = JSON.stringify({ x402Version: 1, accepts: Array.from({ length: 10_000 }, () => option) });
      return () => decodePaymentRequiredV1(body);
    })(),
  ],
];

// Warm up the code paths, then measure the baseline and each case.
for (let i = 0; i < 200; i++) Challenge.deserializeList(plain);
const base = fastest(() => Challenge.deserializeList(plain));
let slowestVector = 0;
let slowestName = '';
for (const s of wwwAuthenticateVectors.scenarios) {
  const wire = wireOf(s.wire);
  const ms = fastest(() => Challenge.deserialize(wire));
  if (ms > slowestVector) [slowestVector, slowestName] = [ms, s.name];
}
const rows: [string, number][] = [
  ['mpp: plain challenge (baseline)', base],
  [`mpp: slowest www-authenticate vector (${slowestName})`, slowestVector],
  ...cases.map(([name, fn]): [string, number] => [name, fastest(fn)]),
];
process.stdout.write(`fastest of ${ROUNDS} rounds; ratio = time / baseline\n`);
for (const [name, ms] of rows) {
  process.stdout.write(`${name.padEnd(78)} ${ms.toFixed(4).padStart(10)} ms  x${(ms / base).toFixed(1)}\n`);
}

// The proxy's request-target parser (proxy/http/request-target.ts), on every request of the hot path: per 10,000
// targets, as ratios to the plain router path (the fast path, no URL object).
const TARGETS = 10_000;
const targetCases: [string, string][] = [
  ['request target: plain router path (fast path, baseline)', '/api/v1/router/route'],
  ['request target: plain path and a query', '/api/v1/router/payments?format=csv&page=2&limit=100'],
  ['request target: a percent-encoded id', `/api/v1/protocol/agents/did%3Apayroute%3Asandbox%3A${'0'.repeat(32)}`],
  ['request target: dot segments', '/api/v1/protocol/../router/%2e%2e/router/payments'],
  ['request target: absolute-form', 'http://proxy.example/api/v1/router/payments?page=1'],
  ['request target: 8,000 characters of %2e%2e/ segments', `/${'%2e%2e/'.repeat(1000)}api/v1/router/route`],
];
for (const [, raw] of targetCases) for (let i = 0; i < 2000; i++) targetOf(raw);
const perTargets = (raw: string) =>
  fastest(() => {
    for (let i = 0; i < TARGETS; i++) targetOf(raw);
  });
const targetBase = perTargets(targetCases[0]?.[1] ?? '/');
process.stdout.write(`\nper ${TARGETS} targets, fastest of ${ROUNDS} rounds; ratio = time / plain router path\n`);
for (const [name, raw] of targetCases) {
  const ms = perTargets(raw);
  process.stdout.write(`${name.padEnd(78)} ${ms.toFixed(4).padStart(10)} ms  x${(ms / targetBase).toFixed(1)}\n`);
}
