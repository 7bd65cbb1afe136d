// `npm run cli -- secrets rotate` (shared/secrets/rotate.ts) on SQLite and PostgreSQL, with the real processes:
// data made under key A (users' and an organization's wallets, the service's signing key, the operator wallet, x402
// permissions, a stored idempotent answer) is re-encrypted to B; processes started with B serve all of it (the JWKS,
// plan tokens, payments signed by a user's and by the organization's wallet, x402 verify and new permissions, the
// idempotent replay), processes still running with A turn unready, and A is refused from then on. Every sealed
// value of every table opens with B afterwards (a sealed column the rotation missed would not). A previous key that
// is not the data's is refused with nothing changed; a half-done rotation (some rows already under the new key)
// finishes when run again, and running it once more changes nothing.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { privateKeyToAccount } from 'viem/accounts';
import { secretBox } from '../../shared/crypto/secrets.js';
import { emSql } from '../../shared/db/sql.js';
import { SEALED_COLUMNS } from '../../shared/secrets/sealed-columns.js';
import { runCli } from '../support/cli.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { createGroupBudget, createOrgDelegation, orgSpendingWorld } from '../support/org-spending.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, type User, createDelegation, fund, v2Target } from '../support/router-fixtures.js';
import type { Spawned, Stack } from '../support/stack.js';
import { decode, mint, paymentRequired, permission, permissionBody, seller } from '../support/x402.js';

const PRICE = 10_000n;
/** A value as the secret box writes it: `v1.<iv>.<ciphertext>.<tag>`. */
const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{22}$/;

const m = merchantsOfFile(PRICE);

const newKey = (): string => randomBytes(32).toString('hex');
let n = 0;
const rid = () => `rotate-${Date.now()}-${++n}`;

/** The tables of the database. */
async function tables(s: Stack): Promise<string[]> {
  const sql = emSql(s.ctx.db.em(), s.ctx.db.dialect);
  const rows =
    s.kind === 'sqlite'
      ? await sql.all("select name as t from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      : await sql.all(
          "select table_name as t from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
        );
  return rows.map((r) => String(r.t));
}

/** Every value of every column of every table that looks sealed, as `table.column` and the value. */
async function sealedValues(s: Stack): Promise<{ where: string; value: string }[]> {
  const sql = emSql(s.ctx.db.em(), s.ctx.db.dialect);
  const out: { where: string; value: string }[] = [];
  for (const table of await tables(s)) {
    for (const row of await sql.all(`select * from "${table}"`)) {
      for (const [column, v] of Object.entries(row)) {
        if (typeof v === 'string' && SEALED.test(v)) out.push({ where: `${table}.${column}`, value: v });
      }
    }
  }
  return out;
}

/** Every sealed column's values by row, and the check value: what a refused rotation must leave as it was. */
async function snapshot(s: Stack): Promise<Record<string, unknown>> {
  const sql = emSql(s.ctx.db.em(), s.ctx.db.dialect);
  const out: Record<string, unknown> = {
    check: (await sql.all('select id, key_check from secrets_key_check')).map((r) => [r.id, r.key_check]),
  };
  for (const c of SEALED_COLUMNS) {
    out[`${c.table}.${c.column}`] = (
      await sql.all(`select ${c.key} as k, ${c.column} as v from ${c.table} order by ${c.key}`)
    ).map((r) => [r.k, r.v]);
  }
  return out;
}

const opens = (key: string, sealed: string): boolean => {
  try {
    secretBox(key).open(sealed);
    return true;
  } catch {
    return false;
  }
};

/** Every sealed value opens with `key` and with none of `not`; each sits in a column the rotation knows. */
async function allSealedWith(t: ExecutionContext, s: Stack, key: string, not: string[]): Promise<void> {
  const values = await sealedValues(s);
  const known = new Set(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`));
  t.true(values.length > 5, 'the scan saw sealed values');
  for (const { where, value } of values) {
    t.true(known.has(where), `${where} holds sealed values: list it in shared/secrets/sealed-columns.ts`);
    t.true(opens(key, value), `${where} opens with the current key`);
    for (const k of not) t.false(opens(k, value), `${where} does not open with an old key`);
  }
  const [check] = await emSql(s.ctx.db.em(), s.ctx.db.dialect).all('select key_check from secrets_key_check');
  t.is(check?.key_check, secretBox(key).keyCheck, 'the check value is the current key');
}

/** The CLI against the stack's database with `env` over it (SECRETS_KEY and SECRETS_KEY_PREVIOUS unset unless given). */
const cli = (s: Stack, args: string[], env: Record<string, string>) =>
  runCli(args, { ...s.env, SECRETS_KEY_PREVIOUS: '', ...env });

/** What was made under the first key, used again after each rotation. */
interface World {
  /** A user paying through a delegation of their own wallet. */
  readonly payer: User;
  readonly delegationId: string;
  /** An organization member paying through the organization wallet. */
  readonly member: User;
  readonly orgDelegationId: string;
  readonly orgWallet: string;
  /** A seller and a subscriber holding credits and an x402 permission. */
  readonly seller: Awaited<ReturnType<typeof seller>>;
  readonly subscriber: User;
  readonly x402Token: string;
  /** An idempotent mint: its key and first answer (sealed in idempotency_key). */
  readonly idempotencyKey: string;
  readonly firstAnswer: unknown;
  readonly kids: string[];
}

async function makeWorld(s: Stack): Promise<World> {
  const payer = await s.user();
  await fund(s, m.chain, payer, 100_000_000n);
  const delegationId = await createDelegation(payer, 1000);
  const org = await orgSpendingWorld(s, m.chain, { members: 1, funds: 100_000_000n });
  await createGroupBudget(org.admin, org.orgId, org.groupId, 1000);
  const member = org.members[0]?.user as User;
  const orgDelegationId = await createOrgDelegation(member, org.walletId, 1000);
  const sel = await seller(s);
  const subscriber = await s.user();
  await mint(sel.user.api, sel.plan.planId, subscriber.walletAddress, 5);
  const x402Token = (await permission(subscriber.api, { planId: sel.plan.planId, agentId: sel.agent.agentId }))
    .x402AccessToken;
  const idempotencyKey = `rotate-${randomBytes(4).toString('hex')}`;
  const first = await sel.user.api.call(
    'POST',
    '/protocol/plans/mint',
    { planId: sel.plan.planId, holderAddress: subscriber.walletAddress, amount: '1' },
    { 'idempotency-key': idempotencyKey },
  );
  if (first.status !== 200) throw new Error(`idempotent mint: ${first.status} ${first.text}`);
  const jwks = (await (await fetch(`${s.proxyUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  return {
    payer,
    delegationId,
    member,
    orgDelegationId,
    orgWallet: org.address,
    seller: sel,
    subscriber,
    x402Token,
    idempotencyKey,
    firstAnswer: first.body,
    kids: jwks.keys.map((k) => k.kid),
  };
}

/** Everything of `w` that opens a sealed value, through a proxy (and its admin) running with the current key. */
async function worldWorks(t: ExecutionContext, w: World, proxyUrl: string, label: string): Promise<void> {
  const as = (u: User) => apiClient(`${proxyUrl}/api/v1`, u.apiKey);
  const jwks = await fetch(`${proxyUrl}/.well-known/jwks.json`);
  t.is(jwks.status, 200, `${label}: JWKS`);
  t.deepEqual(
    ((await jwks.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid),
    w.kids,
    `${label}: the same signing keys`,
  );
  const { plan, agent } = w.seller;
  const token = await as(w.subscriber).get(`/protocol/token/${plan.planId}/${agent.agentId}`);
  t.is(token.status, 200, `${label}: a plan token (signed with the service's key) ${token.text}`);

  // Payments signed by the user's wallet and by the organization wallet; the merchant library accepts each.
  for (const [who, delegationId, from] of [
    [w.payer, w.delegationId, w.payer.walletAddress],
    [w.member, w.orgDelegationId, w.orgWallet],
  ] as const) {
    const r = await as(who).post('/router/payments', {
      delegationId,
      protocol: 'x402',
      target: await v2Target(m.v2),
      resourceUrl: m.v2.url + m.v2.paidPath,
      requestId: rid(),
    });
    t.is(r.status, 200, `${label}: mode A for ${from}: ${r.text}`);
    const paid = await fetch(m.v2.url + m.v2.paidPath, {
      headers: { [r.body.credential.name]: r.body.credential.value },
    });
    t.is(paid.status, 200, `${label}: the merchant accepts the payment signed by ${from}`);
    t.is(decode(r.body.credential.value).payload.authorization.from.toLowerCase(), from.toLowerCase());
  }

  // x402: the permission made under the first key still verifies; a new one is signed by the subscriber's wallet.
  const verify = await as(w.seller.user).post('/x402/verify', {
    paymentRequired: paymentRequired({ planId: plan.planId, agentId: agent.agentId }),
    x402AccessToken: w.x402Token,
    maxAmount: '1',
  });
  t.like(verify.body, { isValid: true }, `${label}: x402 verify ${verify.text}`);
  const again = await as(w.subscriber).post('/x402/permissions', permissionBody({ planId: plan.planId }));
  t.is(again.status, 201, `${label}: a new x402 permission ${again.text}`);

  // The stored answer of the idempotent mint opens: a replay, not a 500.
  const replay = await as(w.seller.user).call(
    'POST',
    '/protocol/plans/mint',
    { planId: plan.planId, holderAddress: w.subscriber.walletAddress, amount: '1' },
    { 'idempotency-key': w.idempotencyKey },
  );
  t.is(replay.status, 200, `${label}: idempotent replay ${replay.text}`);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body, w.firstAnswer);
}

/** An admin and a proxy with `key`, the proxy forwarding to that admin. */
async function startWith(t: ExecutionContext, s: Stack, key: string): Promise<{ admin: Spawned; proxy: Spawned }> {
  const admin = await s.spawn('admin', { SECRETS_KEY: key });
  t.teardown(() => admin.stop());
  const proxy = await s.spawn('proxy', { SECRETS_KEY: key, ADMIN_URL: admin.url });
  t.teardown(() => proxy.stop());
  return { admin, proxy };
}

async function readyz(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: await r.json() };
}

forEachDb(
  ({ stack, test }) => {
    // The tests of one database run in order on one stack: each starts from the key the previous one left.
    let world: World | undefined;
    let current = '';
    const old: string[] = [];

    test('data made under A, rotated to B: served with B, the old processes unready, A refused', async (t) => {
      const s = stack();
      const a = s.env.SECRETS_KEY ?? '';
      world = await makeWorld(s);
      await worldWorks(t, world, s.proxyUrl, 'under A');
      const counts = Object.fromEntries(
        await Promise.all(
          SEALED_COLUMNS.map(async (c) => {
            const [row] = await emSql(s.ctx.db.em(), s.ctx.db.dialect).all(
              `select count(*) as n from ${c.table} where ${c.column} is not null`,
            );
            return [c.table, Number(row?.n)] as const;
          }),
        ),
      );

      const b = newKey();
      const r = await cli(s, ['secrets', 'rotate'], { SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: a });
      t.is(r.code, 0, r.stdout + r.stderr);
      t.deepEqual(r.json, {
        rotated: true,
        from: 'SECRETS_KEY_PREVIOUS',
        to: 'SECRETS_KEY',
        columns: SEALED_COLUMNS.map((c) => ({
          table: c.table,
          column: c.column,
          resealed: counts[c.table],
          alreadyNew: 0,
        })),
      });
      t.false(r.stdout.includes(a) || r.stdout.includes(b) || r.stderr.includes(a) || r.stderr.includes(b));
      for (const c of ['app_user', 'org_wallet', 'signing_key', 'service_wallet', 'idempotency_key'])
        t.true((counts[c] ?? 0) > 0, `${c} had sealed rows to rotate`);
      current = b;
      old.push(a);
      await allSealedWith(t, s, b, [a]);
      const [operator] = await emSql(s.ctx.db.em(), s.ctx.db.dialect).all(
        "select address, key_enc from service_wallet where name = 'operator'",
      );
      const operatorKey = secretBox(b).open(String(operator?.key_enc)) as `0x${string}`;
      t.is(
        String(privateKeyToAccount(operatorKey).address),
        String(operator?.address),
        'the operator wallet key opens with B',
      );

      // The processes still running with A: the data is no longer theirs.
      t.deepEqual(await readyz(s.adminUrl), {
        status: 503,
        body: { status: 'secrets_key_mismatch', service: 'admin' },
      });
      t.deepEqual(await readyz(s.proxyUrl), {
        status: 503,
        body: { status: 'secrets_key_mismatch', service: 'proxy' },
      });

      const { admin, proxy } = await startWith(t, s, b);
      t.deepEqual(await readyz(admin.url), { status: 200, body: { status: 'ready', service: 'admin' } });
      t.deepEqual(await readyz(proxy.url), { status: 200, body: { status: 'ready', service: 'proxy' } });
      await worldWorks(t, world, proxy.url, 'under B');

      // A from now on: refused, as the process, as the CLI.
      const refused = await t.throwsAsync(s.spawn('admin', { SECRETS_KEY: a }));
      t.regex(refused?.message ?? '', /exited with 2/);
      t.regex(refused?.message ?? '', /SECRETS_KEY \(set in the environment or \.env\) does not open the data/);
      const cliA = await cli(s, ['catalog', 'list'], { SECRETS_KEY: a });
      t.is(cliA.code, 2);
    });

    test('a previous key that is not the data’s is refused, exit 1, nothing changed; so are bad ways to give it', async (t) => {
      const s = stack();
      const before = await snapshot(s);
      const next = newKey();
      const wrong = newKey();
      const dir = mkdtempSync(join(tmpdir(), 'payroute-rotate-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const wrongFile = join(dir, 'old.key');
      writeFileSync(wrongFile, `${wrong}\n`, { mode: 0o600 });
      const shortFile = join(dir, 'short.key');
      writeFileSync(shortFile, 'short\n');
      const refusals: [string[], Record<string, string>, RegExp][] = [
        [
          ['secrets', 'rotate'],
          { SECRETS_KEY: next, SECRETS_KEY_PREVIOUS: wrong },
          /not the key the data is sealed with/,
        ],
        [['secrets', 'rotate', '--old-key-file', wrongFile], { SECRETS_KEY: next }, /not the key the data is sealed/],
        [['secrets', 'rotate', '--old-key-file', shortFile], { SECRETS_KEY: next }, /at least 32 characters/],
        [['secrets', 'rotate', '--old-key-file', join(dir, 'none')], { SECRETS_KEY: next }, /cannot read .*ENOENT/],
        [['secrets', 'rotate'], { SECRETS_KEY: next }, /the previous key is needed/],
        [
          ['secrets', 'rotate', '--old-key-file', wrongFile],
          { SECRETS_KEY: next, SECRETS_KEY_PREVIOUS: current },
          /not both/,
        ],
        [['secrets', 'rotate'], { SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: current }, /nothing to rotate/],
      ];
      for (const [args, env, message] of refusals) {
        const r = await cli(s, args, env);
        t.is(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        t.is(r.json.error, 'BCK.HTTP.0400');
        t.regex(String(r.json.message), message);
        t.deepEqual(await snapshot(s), before, `${args.join(' ')}: nothing changed`);
      }

      // A database from before the check (no check value): the wrong key is found out on the first value it
      // cannot open, and still nothing is written.
      await emSql(s.ctx.db.em(), s.ctx.db.dialect).run('delete from secrets_key_check');
      const noCheck = await snapshot(s);
      const r = await cli(s, ['secrets', 'rotate'], { SECRETS_KEY: next, SECRETS_KEY_PREVIOUS: wrong });
      t.is(r.code, 1, r.stdout + r.stderr);
      t.regex(
        String(r.json.message),
        /opens with neither the previous key nor the configured one: nothing was changed/,
      );
      t.deepEqual(await snapshot(s), noCheck, 'nothing changed');
      // The data's own key records the check value again at its next start.
      const ok = await cli(s, ['catalog', 'list'], { SECRETS_KEY: current });
      t.is(ok.code, 0, ok.stdout + ok.stderr);
      t.deepEqual(await snapshot(s), before);
    });

    test('a half-done rotation (some rows already under the new key) finishes when run again; once more changes nothing', async (t) => {
      const s = stack();
      if (world === undefined) return t.fail('the first test made the data');
      const from = current;
      const to = newKey();
      // What a rotation cut short would leave if it went table by table, and what a process still running with the
      // old key leaves behind a finished one: half of the users' rows and every organization wallet already under
      // the new key, the rest and the check value still under the old.
      const sql = emSql(s.ctx.db.em(), s.ctx.db.dialect);
      const users = await sql.all('select id, wallet_key_enc from app_user order by id');
      const half = users.slice(0, Math.ceil(users.length / 2));
      for (const u of half) {
        const plain = secretBox(from).open(String(u.wallet_key_enc));
        await sql.run('update app_user set wallet_key_enc = ? where id = ?', [secretBox(to).seal(plain), String(u.id)]);
      }
      const wallets = await sql.all('select id, wallet_key_enc from org_wallet');
      for (const w of wallets) {
        const plain = secretBox(from).open(String(w.wallet_key_enc));
        await sql.run('update org_wallet set wallet_key_enc = ? where id = ?', [
          secretBox(to).seal(plain),
          String(w.id),
        ]);
      }
      const resume = await cli(s, ['secrets', 'rotate'], { SECRETS_KEY: to, SECRETS_KEY_PREVIOUS: from });
      t.is(resume.code, 0, resume.stdout + resume.stderr);
      const byTable = Object.fromEntries(
        (resume.json.columns as { table: string; resealed: number; alreadyNew: number }[]).map((c) => [
          c.table,
          [c.resealed, c.alreadyNew],
        ]),
      );
      t.deepEqual(byTable.app_user, [users.length - half.length, half.length]);
      t.deepEqual(byTable.org_wallet, [0, wallets.length]);
      t.deepEqual(byTable.signing_key?.[1], 0);
      old.push(from);
      current = to;
      await allSealedWith(t, s, to, old);

      // Run again: nothing left to do, nothing changed.
      const settled = await snapshot(s);
      const again = await cli(s, ['secrets', 'rotate'], { SECRETS_KEY: to, SECRETS_KEY_PREVIOUS: from });
      t.is(again.code, 0, again.stdout + again.stderr);
      for (const c of again.json.columns as { resealed: number }[]) t.is(c.resealed, 0);
      t.deepEqual(await snapshot(s), settled);

      const { proxy } = await startWith(t, s, to);
      await worldWorks(t, world, proxy.url, 'after the resumed rotation');
      const refused = await t.throwsAsync(s.spawn('proxy', { SECRETS_KEY: from }));
      t.regex(refused?.message ?? '', /exited with 2/);
    });
  },
  { ...PAID_ENV },
  { serial: true },
);
