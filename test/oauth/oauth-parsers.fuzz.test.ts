// The parsers of the OAuth endpoints a connector or a device talks to (token, device authorization, revocation:
// form or JSON bodies) and of the human's device endpoints: any body, in either encoding, gets an answer below
// 500 in its endpoint's error format (RFC 6749 `{ error, error_description }` for the first three, the BCK
// envelope for the others). Form bodies include what qs-style parsers turn into arrays and objects (a repeated
// parameter, `a[b]=c`, `__proto__`), which RFC 6749 §3.2 calls invalid.
import test from 'ava';
import fc from 'fast-check';
import { forEachDb } from '../support/matrix.js';
import { connector } from '../support/oauth.js';

const RUNS = Math.max(50, Math.round(Number(process.env.FUZZ_RUNS ?? 1000) / 5));

const PROTOCOL = ['/oauth/token', '/oauth/device_authorization', '/oauth/revoke'] as const;
const HUMAN = ['/oauth/device/details', '/oauth/device', '/oauth/authorize'] as const;

const FIELDS = [
  'grant_type',
  'client_id',
  'code',
  'redirect_uri',
  'code_verifier',
  'refresh_token',
  'device_code',
  'scope',
  'token',
  'token_type_hint',
  'user_code',
  'approve',
  'spending_limit_cents',
  'currency',
  'duration_secs',
  'resource',
  'resource[]',
  'client_id[x]',
  'scope[]',
  '__proto__',
  'constructor[prototype][x]',
];

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    'authorization_code',
    'refresh_token',
    'urn:ietf:params:oauth:grant-type:device_code',
    'commerce',
    'account_access',
    'BCDF-GHJK',
    'http://payroute.test/mcp',
    'http://payroute.test/api/v1',
    '-1',
    '1e309',
    'x'.repeat(5000),
    '\u0000',
    '%00',
    '%',
  ),
);

const formBody = fc
  .array(fc.tuple(fc.constantFrom(...FIELDS), value), { maxLength: 10 })
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
const rawForm = fc.string({ unit: 'binary', maxLength: 200 });
const jsonBody = fc
  .oneof(
    fc.dictionary(
      fc.constantFrom(...FIELDS),
      fc.oneof(value, fc.integer(), fc.boolean(), fc.constant(null), fc.array(value, { maxLength: 2 })),
    ),
    fc.jsonValue({ maxDepth: 3 }),
  )
  .map((v) => JSON.stringify(v));

forEachDb(({ stack, test: register }) => {
  register(`token, device and revocation parsers: ${RUNS} random bodies, form or JSON, never a 5xx`, async (t) => {
    t.timeout(600_000);
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    let failed: string | undefined;
    const outcome = await fc.check(
      fc.asyncProperty(
        fc.constantFrom(...PROTOCOL, ...HUMAN),
        fc.oneof(
          formBody.map((b) => ['application/x-www-form-urlencoded', b] as const),
          rawForm.map((b) => ['application/x-www-form-urlencoded', b] as const),
          jsonBody.map((b) => ['application/json', b] as const),
        ),
        fc.boolean(),
        async (path, [type, body], withClient) => {
          // Half the form cases name a registered client first, so the grant-specific parsers run too.
          const withId =
            withClient && type === 'application/x-www-form-urlencoded'
              ? `client_id=${c.registration.clientId}&${body}`
              : body;
          const r = await fetch(`${s.proxyUrl}${path}`, {
            method: 'POST',
            headers: { 'content-type': type, authorization: `Bearer ${u.apiKey}` },
            body: withId,
          });
          const text = await r.text();
          const protocol = (PROTOCOL as readonly string[]).includes(path);
          let ok = r.status < 500;
          if (ok && r.status >= 400) {
            const parsed = JSON.parse(text) as Record<string, unknown>;
            ok = protocol
              ? typeof parsed.error === 'string' && typeof parsed.error_description === 'string'
              : typeof parsed.code === 'string';
          }
          if (!ok)
            failed = `${path} ${type} ${JSON.stringify(withId).slice(0, 300)} -> ${r.status} ${text.slice(0, 300)}`;
          return ok;
        },
      ),
      { numRuns: RUNS },
    );
    t.false(outcome.failed, `${failed ?? String(outcome.errorInstance)} (seed ${outcome.seed})`);
  });
});

test('the user code normalizer accepts exactly 8 letters of the alphabet, in any case, with or without the dash', async (t) => {
  const { USER_CODE_ALPHABET, normalizeUserCode, newUserCode, displayUserCode } = await import(
    '../../shared/oauth/user-code.js'
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (typed) => {
      const n = normalizeUserCode(typed);
      return n === undefined || new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`).test(n);
    }),
  );
  fc.assert(
    fc.property(fc.constant(null), () => {
      const code = newUserCode();
      const shown = displayUserCode(code);
      return (
        normalizeUserCode(shown) === code &&
        normalizeUserCode(shown.toLowerCase()) === code &&
        normalizeUserCode(code.toLowerCase()) === code
      );
    }),
  );
  t.is(normalizeUserCode('AEIO-UBCD'), undefined);
});
