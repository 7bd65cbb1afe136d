// k6, scenario `paid` (the router side of the benchmark's scenario 2): POST /api/v1/router/route paying an x402 v2
// merchant (the official @x402/express v2 merchant of test/support/merchants on its stub chain, started by
// `loadtest/servers.ts merchant`). The benchmark's baseline — the official @x402 client (@x402/core x402Client +
// @x402/evm ExactEvmScheme) paying the merchant directly — needs EIP-712 signing, which k6 cannot do; the Node runner
// (loadtest/bench-router.ts) runs both sides.
//
// The defaults are the ports of `npm run loadtest:stack`, which prints API_KEY and DELEGATION_ID:
//
//   k6 run -e API_KEY=... -e DELEGATION_ID=... [-e BASE_URL=http://127.0.0.1:8080] \
//          [-e PAID_URL=http://127.0.0.1:9100/paid] [-e VUS=16] [-e DURATION=30s] loadtest/k6/paid.ts
//
// The thresholds are on correctness only (every call paid and settled), never on times: k6 exits non-zero when a
// call was not.
import { check } from 'k6';
import http from 'k6/http';
import type { Options } from 'k6/options';
import { BASE_URL, constantLoad, env, paidUrl, routed } from './common.ts';

export const options: Options = constantLoad('paid', 16, '10s');

export default function paid(): void {
  const body = JSON.stringify({
    requestId: `k6-paid-${__VU}-${__ITER}-${Date.now()}`,
    delegationId: env('DELEGATION_ID'),
    url: paidUrl(),
    method: 'GET',
  });
  const res = http.post(`${BASE_URL}/api/v1/router/route`, body, {
    headers: { authorization: `Bearer ${env('API_KEY')}`, 'content-type': 'application/json' },
  });
  check(res, {
    'route 200': (r) => r.status === 200,
    'merchant paid and settled': (r) => routed(r, true),
  });
}
