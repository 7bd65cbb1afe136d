// Property/fuzz tests (fast-check) for every parser of untrusted input in the credit services: request bodies,
// plan ids, access tokens and proofs (signature + claims), and the endpoint matcher of initialize. Hostile input
// is refused with the expected error, never an unexpected exception. FUZZ_RUNS (default 1,000; 10,000 in
// `npm run test:fuzz`).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { loadConfig } from '../../config/index.js';
import { type ServiceContext, createContext } from '../../shared/context.js';
import { endpointMatches, urlMatches } from '../../shared/credits/endpoint-match.js';
import {
  issueAccessToken,
  issueProof,
  parseAccessClaims,
  parseProofClaims,
  verifyAccessToken,
  verifyProof,
} from '../../shared/credits/tokens.js';
import {
  InitializeBody,
  MAX_PLAN_ID,
  MintBody,
  MintExpirableBody,
  RedeemBody,
  SubTaskBody,
  planIdOf,
} from '../../shared/credits/requests.js';
import { AppError } from '../../shared/errors/app-error.js';
import { type TokenSigner, createTokenSigner, ensureSigningKey } from '../../shared/keys/signing-keys.js';
import { createLogger } from '../../shared/log.js';
import { MAX_INT64 } from '../../shared/money.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 1000);
const HOLDER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const AGENT = `did:payroute:sandbox:${'ab'.repeat(16)}`;

let dir: string;
let ctx: ServiceContext;
let signer: TokenSigner;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'payroute-fuzz-'));
  const config = loadConfig({ DATA_DIR: dir, SECRETS_KEY: randomBytes(32).toString('hex') });
  ctx = await createContext(config, createLogger({ LOG_LEVEL: 'silent' }, 'fuzz'), { migrate: true });
  await ensureSigningKey(ctx);
  signer = createTokenSigner(ctx);
});

test.after.always(async () => {
  await ctx?.db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** JSON-ish values with a bias towards the fields and shapes the schemas look at. */
const amountish = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.string(),
  fc.constantFrom('0', '01', '-1', '1e3', ' 1', '9223372036854775807', '9223372036854775808', 'NaN', ''),
);
const addressish = fc.oneof(
  fc.constant(HOLDER),
  fc.constant(HOLDER.toLowerCase()),
  fc.stringMatching(/^0x[0-9a-fA-F]{0,42}$/),
  fc.string(),
);
const fieldValue = fc.oneof(amountish, addressish, fc.anything());
const bodyish = fc.oneof(
  fc.anything(),
  fc.record(
    {
      planId: fc.oneof(fc.integer(), fc.string(), fc.anything()),
      holderAddress: addressish,
      amount: amountish,
      durationSecs: fc.oneof(fc.integer(), fc.double(), fc.string()),
      proof: fc.string(),
      agentRequestId: fc.string(),
      creditsToRedeem: amountish,
      tag: fc.oneof(fc.string(), fieldValue),
      accessToken: fc.string(),
      endpoint: fc.oneof(fc.webUrl(), fc.string()),
      httpVerb: fc.oneof(fc.constantFrom('GET', 'post', 'Put', 'FETCH', ''), fc.string()),
      maxCredits: amountish,
    },
    { requiredKeys: [] },
  ),
);

test('body schemas never throw; accepted amounts are bigint within 1..2^63-1, addresses checksummed', (t) => {
  fc.assert(
    fc.property(bodyish, (body) => {
      for (const schema of [MintBody, MintExpirableBody, RedeemBody, SubTaskBody, InitializeBody]) {
        const r = schema.safeParse(body);
        if (!r.success) continue;
        const d = r.data as Record<string, unknown>;
        for (const key of ['amount', 'creditsToRedeem', 'maxCredits']) {
          const v = d[key];
          if (v === undefined) continue;
          if (typeof v !== 'bigint' || v <= 0n || v > MAX_INT64) return false;
        }
        if ('holderAddress' in d && !/^0x[0-9a-fA-F]{40}$/.test(String(d.holderAddress))) return false;
        if ('durationSecs' in d && !(Number.isInteger(d.durationSecs) && (d.durationSecs as number) > 0)) return false;
      }
      return true;
    }),
    { numRuns },
  );
  t.pass();
});

test('planIdOf never throws and yields an integer in 1..2^31-1 that round-trips, or undefined', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.integer(), fc.double(), fc.stringMatching(/^[0-9]{1,12}$/)), (raw) => {
      const id = planIdOf(raw);
      if (id === undefined) return true;
      return Number.isInteger(id) && id >= 1 && id <= MAX_PLAN_ID && String(id) === String(raw);
    }),
    { numRuns },
  );
  t.pass();
});

test('claim parsers never throw on arbitrary payloads', (t) => {
  const payload = fc.oneof(
    fc.anything(),
    fc.record(
      {
        planId: fc.oneof(fc.string(), fc.integer(), fc.constant('12')),
        agentId: fc.oneof(fc.string(), fc.constant(AGENT)),
        holder: addressish,
        sub: addressish,
        exp: fc.oneof(fc.integer(), fc.double()),
        agentRequestId: fc.oneof(fc.uuid(), fc.string()),
        maxCredits: amountish,
      },
      { requiredKeys: [] },
    ),
  );
  fc.assert(
    fc.property(payload, (p) => {
      parseAccessClaims(p);
      parseProofClaims(p);
      return true;
    }),
    { numRuns },
  );
  t.pass();
});

/** Only an AppError with the expected code may come out of a verifier. */
async function refusedWith(code: string, run: () => Promise<unknown>): Promise<'refused' | 'accepted'> {
  try {
    await run();
    return 'accepted';
  } catch (err) {
    if (err instanceof AppError && err.code === code) return 'refused';
    throw err;
  }
}

test('verifiers refuse arbitrary strings with their own codes (401 0021 / 400 0022)', async (t) => {
  const jwtish = fc.oneof(
    fc.string(),
    fc
      .tuple(fc.base64String(), fc.base64String(), fc.base64String())
      .map(([a, b, c]) => `${a}.${b}.${c}`.replaceAll('=', '')),
    fc
      .tuple(fc.json(), fc.json())
      .map(
        ([h, p]) =>
          `${Buffer.from(h).toString('base64url')}.${Buffer.from(p).toString('base64url')}.${randomBytes(64).toString('base64url')}`,
      ),
    fc.constant('eyJhbGciOiJub25lIn0.eyJwbGFuSWQiOiIxIn0.'),
  );
  await fc.assert(
    fc.asyncProperty(jwtish, async (token) => {
      return (
        (await refusedWith('BCK.PROTOCOL.0021', () => verifyAccessToken(signer, token))) === 'refused' &&
        (await refusedWith('BCK.PROTOCOL.0022', () => verifyProof(signer, token))) === 'refused'
      );
    }),
    { numRuns },
  );
  t.pass();
});

test('a mutated token or proof never verifies as something else; the two kinds never cross', async (t) => {
  const { accessToken } = await issueAccessToken(ctx, signer, { planId: 12, agentId: AGENT, holder: HOLDER });
  const proof = await issueProof(ctx, signer, {
    planId: 12,
    holder: HOLDER,
    agentId: AGENT,
    agentRequestId: '6f1b0a4e-8c7d-4f0e-9a55-3f3f3f3f3f3f',
    maxCredits: 5n,
  });
  const original = await verifyAccessToken(signer, accessToken);
  const originalProof = await verifyProof(signer, proof);
  t.like(original, { planId: '12', agentId: AGENT, holder: HOLDER });
  t.like(originalProof, { planId: '12', maxCredits: 5n });
  t.is(await refusedWith('BCK.PROTOCOL.0021', () => verifyAccessToken(signer, proof)), 'refused');
  t.is(await refusedWith('BCK.PROTOCOL.0022', () => verifyProof(signer, accessToken)), 'refused');

  const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
  const mutation = fc.record({ at: fc.nat(), ch: fc.constantFrom(...B64URL.split('')), cut: fc.boolean() });
  const mutate = (token: string, m: { at: number; ch: string; cut: boolean }) => {
    const i = m.at % token.length;
    return m.cut ? token.slice(0, i) : `${token.slice(0, i)}${m.ch}${token.slice(i + 1)}`;
  };
  await fc.assert(
    fc.asyncProperty(mutation, async (m) => {
      const badToken = mutate(accessToken, m);
      const badProof = mutate(proof, m);
      // Either refused, or (a change in unused base64 bits) the very same claims.
      let okToken = true;
      try {
        const c = await verifyAccessToken(signer, badToken);
        okToken = JSON.stringify(c) === JSON.stringify(original);
      } catch (err) {
        okToken = err instanceof AppError && err.code === 'BCK.PROTOCOL.0021';
      }
      let okProof = true;
      try {
        const c = await verifyProof(signer, badProof);
        okProof =
          c.agentRequestId === originalProof.agentRequestId &&
          c.maxCredits === originalProof.maxCredits &&
          c.holder === HOLDER;
      } catch (err) {
        okProof = err instanceof AppError && err.code === 'BCK.PROTOCOL.0022';
      }
      return okToken && okProof;
    }),
    { numRuns },
  );
});

// `.` and `..` are dot-segments: URL parsing resolves them away, so they are no single-segment filling.
const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/).filter((s) => s !== '.' && s !== '..');

test('endpoint matcher never throws on arbitrary strings and registered shapes', (t) => {
  const endpoints = fc.array(
    fc.dictionary(
      fc.string({ maxLength: 8 }),
      fc.oneof(fc.webUrl(), fc.string(), fc.anything() as fc.Arbitrary<string>),
    ),
    {
      maxLength: 4,
    },
  );
  fc.assert(
    fc.property(
      endpoints,
      fc.string(),
      fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string()),
      (eps, verb, url) => {
        const r = endpointMatches(eps, verb, url);
        return typeof r === 'boolean';
      },
    ),
    { numRuns },
  );
  t.pass();
});

test('a template matches itself and every non-empty filling of its :name segments, and no other literal', (t) => {
  const template = fc.record({
    host: fc.constantFrom('agent.example.com', 'api.test', 'x.y.z.example'),
    parts: fc.array(
      fc.oneof(
        segment,
        segment.map((s) => `:${s.replace(/[^A-Za-z0-9_]/g, '') || 'p'}`.replace(/^:([0-9])/, ':p$1')),
      ),
      {
        minLength: 1,
        maxLength: 6,
      },
    ),
    query: fc.option(fc.stringMatching(/^[a-z]{1,5}=[a-z0-9]{1,5}$/), { nil: undefined }),
  });
  fc.assert(
    fc.property(template, fc.array(segment, { minLength: 6, maxLength: 6 }), segment, (tpl, fills, other) => {
      const q = tpl.query === undefined ? '' : `?${tpl.query}`;
      const registered = `https://${tpl.host}/${tpl.parts.join('/')}${q}`;
      const filled = `https://${tpl.host}/${tpl.parts.map((p, i) => (p.startsWith(':') ? fills[i] : p)).join('/')}${q}`;
      if (!urlMatches(registered, registered) || !urlMatches(registered, filled)) return false;
      if (!endpointMatches([{ GET: registered }], 'get', filled)) return false;
      if (endpointMatches([{ GET: registered }], 'POST', filled)) return false;
      // Replacing a literal segment with a different value, dropping a segment or changing the query: no match.
      const literal = tpl.parts.findIndex((p) => !p.startsWith(':'));
      if (literal >= 0 && other !== tpl.parts[literal]) {
        const parts = tpl.parts.map((p, i) => (i === literal ? other : p.startsWith(':') ? (fills[i] ?? 'x') : p));
        if (urlMatches(registered, `https://${tpl.host}/${parts.join('/')}${q}`)) return false;
      }
      if (urlMatches(registered, `https://${tpl.host}/${tpl.parts.slice(0, -1).join('/')}${q}`) && tpl.parts.length > 0)
        return false;
      if (urlMatches(registered, `https://${tpl.host}/${tpl.parts.join('/')}${q === '' ? '?' : `${q}&`}extra=1`))
        return false;
      return true;
    }),
    { numRuns },
  );
  t.pass();
});
