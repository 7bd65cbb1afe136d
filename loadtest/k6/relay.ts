// k6, scenario `relay` (and the load of the benchmark's scenario 1): the free relay through ALL
// /api/v1/router/proxy, GET and a small JSON POST alternating, each with a fresh X-Router-Request-Id. The same script
// measures the benchmark's baseline: point BASE_URL at a bare http-proxy-3 pass-through to the same upstream (it
// ignores the X-Router-* headers). `npm run loadtest -- relay` runs the same requests with autocannon.
//
// The defaults are the ports of `npm run loadtest:stack`, which prints API_KEY and DELEGATION_ID:
//
//   k6 run -e API_KEY=... -e DELEGATION_ID=... [-e BASE_URL=http://127.0.0.1:8080] \
//          [-e TARGET_URL=http://127.0.0.1:9101/free] [-e VUS=32] [-e DURATION=30s] loadtest/k6/relay.ts
//
// The thresholds are on correctness only (every relay answered 200), never on times: k6 exits non-zero when one
// failed.
import { check } from 'k6';
import http from 'k6/http';
import type { Options } from 'k6/options';
import { BASE_URL, constantLoad, env, targetUrl } from './common.ts';

export const options: Options = constantLoad('relay', 32, '5s', { discardResponseBodies: true });

const BODY = JSON.stringify({ question: 'what is the answer?', n: 42 });

export default function relay(): void {
  const headers: Record<string, string> = {
    authorization: `Bearer ${env('API_KEY')}`,
    'x-router-target-url': targetUrl(),
    'x-router-delegation-id': env('DELEGATION_ID'),
    'x-router-request-id': `k6-${__VU}-${__ITER}-${Date.now()}`,
  };
  const url = `${BASE_URL}/api/v1/router/proxy`;
  const res =
    __ITER % 2 === 0
      ? http.get(url, { headers })
      : http.post(url, BODY, { headers: { ...headers, 'content-type': 'application/json' } });
  check(res, { 'relayed 200': (r) => r.status === 200 });
}
