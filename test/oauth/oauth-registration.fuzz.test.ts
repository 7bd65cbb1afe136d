// The dynamic registration endpoint's parser (POST /oauth/register, RFC 7591): any body, JSON or form, with the
// fields a registration has and values of every kind, gets an answer below 500: 201, or an RFC 7591 §3.2.2 body
// (`{ error, error_description }`: invalid_redirect_uri, invalid_client_metadata), or the per-address limit's 429.
import fc from 'fast-check';
import { forEachDb } from '../support/matrix.js';

const RUNS = Math.max(50, Math.round(Number(process.env.FUZZ_RUNS ?? 1000) / 5));

const FIELDS = [
  'client_name',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'scope',
  'client_uri',
  'logo_uri',
  'contacts',
  'jwks',
  'software_statement',
  'redirect_uris[]',
  '__proto__',
  'constructor',
];

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    'https://host.example/cb',
    'http://127.0.0.1:9/cb',
    'http://host.example/cb',
    'com.example.app:/cb',
    'none',
    'client_secret_basic',
    'authorization_code',
    'refresh_token',
    'code',
    'commerce',
    'x'.repeat(5000),
    '\u0000',
  ),
);

const field = fc.oneof(
  value,
  fc.array(value, { maxLength: 4 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(fc.string({ maxLength: 5 }), value, { maxKeys: 2 }),
);

const jsonBody = fc
  .oneof(fc.dictionary(fc.constantFrom(...FIELDS), field), fc.jsonValue({ maxDepth: 3 }))
  .map((v) => JSON.stringify(v));
const formBody = fc
  .array(fc.tuple(fc.constantFrom(...FIELDS), value), { maxLength: 8 })
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
const rawBody = fc.string({ unit: 'binary', maxLength: 200 });

forEachDb(({ stack, test }) => {
  test(`registration parser: ${RUNS} random bodies, JSON or form, never a 5xx, errors in RFC 7591 form`, async (t) => {
    t.timeout(600_000);
    const s = stack();
    let failed: string | undefined;
    const outcome = await fc.check(
      fc.asyncProperty(
        fc.oneof(
          jsonBody.map((b) => ['application/json', b] as const),
          formBody.map((b) => ['application/x-www-form-urlencoded', b] as const),
          rawBody.map((b) => ['application/json', b] as const),
        ),
        async ([type, body]) => {
          const r = await fetch(`${s.proxyUrl}/oauth/register`, {
            method: 'POST',
            headers: { 'content-type': type },
            body,
          });
          const text = await r.text();
          let ok = r.status < 500;
          if (ok && r.status >= 400) {
            const parsed = JSON.parse(text) as Record<string, unknown>;
            const errors = ['invalid_redirect_uri', 'invalid_client_metadata', 'temporarily_unavailable'];
            ok = errors.includes(String(parsed.error)) && typeof parsed.error_description === 'string';
          }
          if (!ok) failed = `${type} ${JSON.stringify(body).slice(0, 300)} -> ${r.status} ${text.slice(0, 300)}`;
          return ok;
        },
      ),
      { numRuns: RUNS },
    );
    t.false(outcome.failed, `${failed ?? String(outcome.errorInstance)} (seed ${outcome.seed})`);
  });
});
