// k6 scenario 4: the load of the proxy memory check: 200k free relays (bounded by count and by time), while the
// proxy's VmRSS is sampled from outside (/proc/<pid>/status). The Node runner (loadtest/bench-router.ts) does the
// sampling; with k6, sample the proxy's VmRSS with e.g. `while sleep 0.25; do grep VmRSS /proc/$PID/status; done`.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e API_KEY=... -e DELEGATION_ID=... \
//          -e TARGET_URL=http://127.0.0.1:9000/free [-e REQUESTS=200000] [-e MAX_DURATION=180s] loadtest/k6/relay-soak.ts
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

export const options: Options = {
  scenarios: {
    soak: {
      executor: 'shared-iterations',
      vus: Number(env('VUS', '32')),
      iterations: Number(env('REQUESTS', '200000')),
      maxDuration: env('MAX_DURATION', '180s'),
    },
  },
  discardResponseBodies: true,
};

const BODY = JSON.stringify({ question: 'what is the answer?', n: 42 });

export default function soak(): void {
  const headers: Record<string, string> = {
    authorization: `Bearer ${env('API_KEY')}`,
    'x-router-target-url': env('TARGET_URL'),
    'x-router-delegation-id': env('DELEGATION_ID'),
    'x-router-request-id': `k6-soak-${__VU}-${__ITER}-${Date.now()}`,
  };
  const url = `${BASE_URL}/api/v1/router/proxy`;
  const res =
    __ITER % 2 === 0
      ? http.get(url, { headers })
      : http.post(url, BODY, { headers: { ...headers, 'content-type': 'application/json' } });
  check(res, { 'relayed 200': (r) => r.status === 200 });
}
