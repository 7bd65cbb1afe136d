// k6 scenario 3 (router side): mode A, POST /api/v1/router/payments minting an x402 v2 credential for the
// requirements a merchant's 402 carried (TARGET_JSON: `{"x402Version":2,"accepts":[...],"resource":{...}}`, e.g.
// the decoded PAYMENT-REQUIRED header of the benchmark merchant). The baseline — signAuthorization (native) on one
// core — is an in-process loop, run by the Node runner (loadtest/bench-router.ts).
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e API_KEY=... -e DELEGATION_ID=... -e TARGET_JSON='{...}' \
//          [-e VUS=16] [-e DURATION=20s] loadtest/k6/mint.ts
import { check, fail } from 'k6';
import http from 'k6/http';
import type { Options } from 'k6/options';

function env(name: string, dflt?: string): string {
  const v = __ENV[name] ?? dflt;
  if (v === undefined || v === '') fail(`${name} is required`);
  return v as string;
}

const BASE_URL = env('BASE_URL');
if (!/^http:\/\/127\.0\.0\.1(:\d+)?$/.test(BASE_URL)) fail('BASE_URL must be http://127.0.0.1[:port]');
const TARGET: unknown = JSON.parse(env('TARGET_JSON'));

export const options: Options = {
  scenarios: {
    mint: {
      executor: 'constant-vus',
      vus: Number(env('VUS', '16')),
      duration: env('DURATION', '20s'),
      gracefulStop: '5s',
    },
  },
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

export default function mint(): void {
  const body = JSON.stringify({
    delegationId: env('DELEGATION_ID'),
    protocol: 'x402',
    target: TARGET,
    requestId: `k6-mint-${__VU}-${__ITER}-${Date.now()}`,
  });
  const res = http.post(`${BASE_URL}/api/v1/router/payments`, body, {
    headers: { authorization: `Bearer ${env('API_KEY')}`, 'content-type': 'application/json' },
  });
  check(res, {
    'minted 200': (r) => r.status === 200,
    'credential returned': (r) =>
      typeof (r.json() as { credential?: { value?: unknown } }).credential?.value === 'string',
  });
}
