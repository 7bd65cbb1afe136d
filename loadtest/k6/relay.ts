// k6 scenario 1 (and the load of scenario 4): the free relay through ALL /api/v1/router/proxy, GET and a small
// JSON POST alternating, each with a fresh X-Router-Request-Id. The same script measures the baseline: point
// BASE_URL at a bare http-proxy-3 pass-through to the same upstream (it ignores the X-Router-* headers).
// The Node runner (loadtest/bench-router.ts, `npm run bench:router`) executes the same requests with autocannon,
// since the k6 binary cannot be installed here.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e API_KEY=... -e DELEGATION_ID=... \
//          -e TARGET_URL=http://127.0.0.1:9000/free [-e VUS=32] [-e DURATION=20s] loadtest/k6/relay.ts
import { check, fail } from 'k6';
import http from 'k6/http';
import type { Options } from 'k6/options';

function env(name: string, dflt?: string): string {
  const v = __ENV[name] ?? dflt;
  if (v === undefined || v === '') fail(`${name} is required`);
  return v as string;
}

const BASE_URL = env('BASE_URL');
// Local targets only: the scenario is a loopback benchmark.
if (!/^http:\/\/127\.0\.0\.1(:\d+)?$/.test(BASE_URL)) fail('BASE_URL must be http://127.0.0.1[:port]');

export const options: Options = {
  scenarios: {
    relay: {
      executor: 'constant-vus',
      vus: Number(env('VUS', '32')),
      duration: env('DURATION', '20s'),
      gracefulStop: '5s',
    },
  },
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

const BODY = JSON.stringify({ question: 'what is the answer?', n: 42 });

export default function relay(): void {
  const headers: Record<string, string> = {
    authorization: `Bearer ${env('API_KEY')}`,
    'x-router-target-url': env('TARGET_URL'),
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
