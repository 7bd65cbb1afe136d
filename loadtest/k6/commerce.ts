// k6, scenario `commerce` (the commerce side of the benchmark's scenario 5): POST /api/v1/router/commerce/route, a
// connector paying a merchant with the user's commerce grant: the caller is an OAuth access token (ES256 JWT,
// `typ: at+jwt`) and the delegation is the grant's (the body names none). Its baseline is loadtest/k6/paid.ts
// (POST /api/v1/router/route with the user's API key) against the same PAID_URL: the two differ only in the
// credential check. The benchmark's scenario 6 (`FREE=1`): the same route to TARGET_URL, a free upstream
// (`loadtest/servers.ts upstream`) whose answer is relayed unpaid; its baseline (/router/route to the same URL)
// runs in the Node runner (loadtest/bench-router.ts).
//
// The token: TOKEN (`npm run loadtest:stack` prints one that lives a day), or none and setup() gets one as a
// connector does, for a registered client (CLIENT_ID; loadtest:stack prints its own, or register one with
// `npm run cli -- oauth-clients create --name bench --redirect-uri http://127.0.0.1:8765/callback`): the user's
// approval (POST /oauth/authorize with API_KEY; a commerce grant with a $1,000,000 usdc cap for a day) and the code
// redeemed with PKCE (POST /oauth/token). An access token lives OAUTH_ACCESS_TOKEN_TTL_SECS (900 s by default).
// The defaults are the ports of `npm run loadtest:stack`:
//
//   k6 run -e TOKEN=<access token> [-e BASE_URL=http://127.0.0.1:8080] [-e PAID_URL=http://127.0.0.1:9100/paid] \
//          [-e VUS=16] [-e DURATION=30s] loadtest/k6/commerce.ts
//   k6 run -e API_KEY=... -e CLIENT_ID=... [-e REDIRECT_URI=...] loadtest/k6/commerce.ts
//   k6 run -e TOKEN=<access token> -e FREE=1 [-e TARGET_URL=http://127.0.0.1:9101/free] [-e VUS=32] loadtest/k6/commerce.ts
//
// The thresholds are on correctness only (every call answered and checked), never on times: k6 exits non-zero when
// a call failed; the benchmark reads the figures as a ratio to paid.ts run against the same merchant
// (BENCHMARKS.md).
import { check, fail } from 'k6';
import { randomBytes, sha256 } from 'k6/crypto';
import { b64encode } from 'k6/encoding';
import http from 'k6/http';
import type { Options } from 'k6/options';
import { BASE_URL, constantLoad, env, paidUrl, routed, targetUrl } from './common.ts';

const FREE = __ENV.FREE === '1';

export const options: Options = constantLoad('commerce', FREE ? 32 : 16, '10s');

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
    url: FREE ? targetUrl() : paidUrl(),
    method: 'GET',
  });
  const res = http.post(`${BASE_URL}/api/v1/router/commerce/route`, body, {
    headers: { authorization: `Bearer ${data.token}`, 'content-type': 'application/json' },
  });
  check(res, {
    'commerce route 200': (r) => r.status === 200,
    [FREE ? 'free answer relayed unpaid' : 'merchant paid and settled']: (r) => routed(r, !FREE),
  });
}
