// k6, scenario `mint` (the router side of the benchmark's scenario 3): mode A, POST /api/v1/router/payments minting
// an x402 v2 credential for the requirements a merchant's 402 carried. setup() asks PAID_URL for its 402 and passes
// its PAYMENT-REQUIRED header on (as an agent would); TARGET_JSON (`{"x402Version":2,"accepts":[...],...}`) replaces
// that. The benchmark's baseline — signAuthorization (native) on one core — is an in-process loop of the Node runner
// (loadtest/bench-router.ts).
//
// The defaults are the ports of `npm run loadtest:stack`, which prints API_KEY and DELEGATION_ID:
//
//   k6 run -e API_KEY=... -e DELEGATION_ID=... [-e BASE_URL=http://127.0.0.1:8080] \
//          [-e PAID_URL=http://127.0.0.1:9100/paid | -e TARGET_JSON='{...}'] [-e VUS=16] [-e DURATION=30s] \
//          loadtest/k6/mint.ts
//
// The thresholds are on correctness only (every mint answered with a credential), never on times.
import { check, fail } from 'k6';
import { b64decode } from 'k6/encoding';
import http from 'k6/http';
import type { Options } from 'k6/options';
import { BASE_URL, constantLoad, env, paidUrl } from './common.ts';

export const options: Options = constantLoad('mint', 16, '5s');

interface Data {
  target: unknown;
}

/** The mint's target: TARGET_JSON, or the merchant's own 402 (x402 v2: the base64 JSON of PAYMENT-REQUIRED). */
export function setup(): Data {
  const given = __ENV.TARGET_JSON;
  if (given !== undefined && given !== '') return { target: JSON.parse(given) };
  // A 402 is the expected answer here, not a failed request.
  const probe = http.get(paidUrl(), {
    responseCallback: http.expectedStatuses(402),
  });
  const name = Object.keys(probe.headers).find((h) => h.toLowerCase() === 'payment-required');
  if (probe.status !== 402 || name === undefined) fail(`PAID_URL answered ${probe.status} without PAYMENT-REQUIRED`);
  const required = JSON.parse(b64decode(probe.headers[name as string] as string, 'std', 's')) as Record<
    string,
    unknown
  >;
  return {
    target: {
      x402Version: 2,
      accepts: required.accepts,
      resource: required.resource,
      extensions: required.extensions,
    },
  };
}

export default function mint(data: Data): void {
  const body = JSON.stringify({
    delegationId: env('DELEGATION_ID'),
    protocol: 'x402',
    target: data.target,
    requestId: `k6-mint-${__VU}-${__ITER}-${Date.now()}`,
  });
  const res = http.post(`${BASE_URL}/api/v1/router/payments`, body, {
    headers: { authorization: `Bearer ${env('API_KEY')}`, 'content-type': 'application/json' },
  });
  check(res, {
    'minted 200': (r) => r.status === 200,
    'credential returned': (r) =>
      r.status === 200 && typeof (r.json() as { credential?: { value?: unknown } }).credential?.value === 'string',
  });
}
