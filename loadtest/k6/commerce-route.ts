// k6 scenario 5 (commerce side): POST /api/v1/router/commerce/route, a connector paying a merchant with the user's
// commerce grant: the caller is an OAuth access token (ES256 JWT, `typ: at+jwt`) and the delegation is the grant's
// (the body names none). Its baseline is loadtest/k6/paid-route.ts (POST /api/v1/router/route with the user's API
// key) against the same PAID_URL: the two differ only in the credential check. Scenario 6 (`FREE=1`): the same
// route to TARGET_URL, a free upstream (`loadtest/servers.ts upstream`) whose answer is relayed unpaid; its
// baseline (/router/route to the same URL) runs in the Node runner (loadtest/bench-router.ts).
//
// The token: TOKEN, or none and setup() gets one as a connector does, for a client registered with
// `npm run cli -- oauth-clients create --name bench --redirect-uri http://127.0.0.1:8765/callback`: the user's
// approval (POST /oauth/authorize with API_KEY; a commerce grant with a $1,000,000 usdc cap for a day) and the code
// redeemed with PKCE (POST /oauth/token). An access token lives OAUTH_ACCESS_TOKEN_TTL_SECS (900 s by default).
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e API_KEY=... -e CLIENT_ID=... [-e REDIRECT_URI=...] \
//          -e PAID_URL=http://127.0.0.1:9100/paid [-e VUS=16] [-e DURATION=20s] loadtest/k6/commerce-route.ts
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e TOKEN=<access token> -e FREE=1 -e TARGET_URL=http://127.0.0.1:9200/free \
//          [-e VUS=32] loadtest/k6/commerce-route.ts
//
// The thresholds are on correctness only (every call answered and checked), never on times: the figures are read
// as a ratio to paid-route.ts run against the same merchant (BENCHMARKS.md).
import { check, fail } from 'k6';
import { randomBytes, sha256 } from 'k6/crypto';
import { b64encode } from 'k6/encoding';
import http from 'k6/http';
import type { Options } from 'k6/options';

function env(name: string, dflt?: string): string {
  const v = __ENV[name] ?? dflt;
  if (v === undefined || v === '') fail(`${name} is required`);
  return v as string;
}

const BASE_URL = env('BASE_URL');
if (!/^http:\/\/127\.0\.0\.1(:\d+)?$/.test(BASE_URL)) fail('BASE_URL must be http://127.0.0.1[:port]');
const FREE = __ENV.FREE === '1';

export const options: Options = {
  scenarios: {
    commerce: {
      executor: 'constant-vus',
      vus: Number(env('VUS', FREE ? '32' : '16')),
      duration: env('DURATION', '20s'),
      gracefulStop: '10s',
    },
  },
  thresholds: {
    checks: ['rate==1'],
    http_req_failed: ['rate==0'],
  },
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

interface RouteAnswer {
  status: number;
  paid: boolean;
  payment?: { status: string };
}

/** An access token of a commerce grant: TOKEN, or the user's approval and the code's redemption (PKCE S256). */
export function setup(): { token: string } {
  const given = __ENV.TOKEN;
  if (given !== undefined && given !== '') return { token: given };
  const clientId = env('CLIENT_ID');
  const redirectUri = env('REDIRECT_URI', 'http://127.0.0.1:8765/callback');
  const verifier = b64encode(randomBytes(32), 'rawurl');
  const approved = http.post(
    `${BASE_URL}/oauth/authorize`,
    JSON.stringify({
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: sha256(verifier, 'base64rawurl'),
      code_challenge_method: 'S256',
      scope: 'commerce',
      spending_limit_cents: 100_000_000,
      currency: 'usdc',
      duration_secs: 86_400,
    }),
    { headers: { authorization: `Bearer ${env('API_KEY')}`, 'content-type': 'application/json' } },
  );
  const code = approved.status === 201 ? (approved.json() as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') fail(`oauth/authorize answered ${approved.status}: ${String(approved.body)}`);
  const issued = http.post(`${BASE_URL}/oauth/token`, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: code as string,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  });
  const token = issued.status === 200 ? (issued.json() as { access_token?: unknown }).access_token : undefined;
  if (typeof token !== 'string') fail(`oauth/token answered ${issued.status}: ${String(issued.body)}`);
  return { token: token as string };
}

export default function commerce(data: { token: string }): void {
  const body = JSON.stringify({
    requestId: `k6-commerce-${__VU}-${__ITER}-${Date.now()}`,
    url: FREE ? env('TARGET_URL') : env('PAID_URL'),
    method: 'GET',
  });
  const res = http.post(`${BASE_URL}/api/v1/router/commerce/route`, body, {
    headers: { authorization: `Bearer ${data.token}`, 'content-type': 'application/json' },
  });
  check(res, {
    'commerce route 200': (r) => r.status === 200,
    [FREE ? 'free answer relayed unpaid' : 'merchant paid and settled']: (r) => {
      if (r.status !== 200) return false;
      const a = r.json() as unknown as RouteAnswer;
      return a.status === 200 && (FREE ? !a.paid : a.paid && a.payment?.status === 'Settled');
    },
  });
}
