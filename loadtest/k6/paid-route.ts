// k6 scenario 2 (router side): POST /api/v1/router/route paying an x402 v2 merchant (the official
// @x402/express v2 merchant of test/support/merchants on its stub chain, started by loadtest/servers.ts merchant).
// The baseline of this scenario — the official @x402 client (@x402/core x402Client + @x402/evm ExactEvmScheme)
// paying the merchant directly — needs EIP-712 signing, which k6 cannot do; the Node runner
// (loadtest/bench-router.ts) runs both sides.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e API_KEY=... -e DELEGATION_ID=... \
//          -e PAID_URL=http://127.0.0.1:9100/paid [-e VUS=16] [-e DURATION=20s] loadtest/k6/paid-route.ts
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
    paid: {
      executor: 'constant-vus',
      vus: Number(env('VUS', '16')),
      duration: env('DURATION', '20s'),
      gracefulStop: '10s',
    },
  },
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

interface RouteAnswer {
  status: number;
  paid: boolean;
  payment?: { status: string };
}

export default function paid(): void {
  const body = JSON.stringify({
    requestId: `k6-paid-${__VU}-${__ITER}-${Date.now()}`,
    delegationId: env('DELEGATION_ID'),
    url: env('PAID_URL'),
    method: 'GET',
  });
  const res = http.post(`${BASE_URL}/api/v1/router/route`, body, {
    headers: { authorization: `Bearer ${env('API_KEY')}`, 'content-type': 'application/json' },
  });
  check(res, {
    'route 200': (r) => r.status === 200,
    'merchant paid and settled': (r) => {
      const a = r.json() as unknown as RouteAnswer;
      return a.status === 200 && a.paid && a.payment?.status === 'Settled';
    },
  });
}
