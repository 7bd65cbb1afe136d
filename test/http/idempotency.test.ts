// Idempotency-Key on the seven money-moving admin POSTs (README "Idempotent requests"), on SQLite and PostgreSQL
// through the real processes: a repeat replays the first answer (2xx or 4xx) with Idempotent-Replayed and never a
// second effect; a different request under the key is 409 BCK.IDEMPOTENCY.0001; keys are per user; no key changes
// nothing; a malformed key is 400; the stored answer is sealed; expired rows are purged.
import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { buildAdminApp } from '../../admin/app.js';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { abandon, claim, complete, keyHashOf, purgeExpired } from '../../shared/idempotency/store.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import type { ApiResponse } from '../support/http.js';
import { ROUTE_CASES, send } from '../support/idempotent-routes.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS, createPlan } from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';

const REPLAYED = 'idempotent-replayed';

async function keyRows(s: Stack, userId: string): Promise<Record<string, any>[]> {
  return s.ctx.db
    .em()
    .execute(
      'select user_id, scope, key_hash, fingerprint, state, response_status, response from idempotency_key where user_id = ?',
      [userId],
    );
}

/** Every string of a JSON answer (ids, tokens, addresses): none may appear in the stored row. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (typeof v === 'object' && v !== null) return Object.values(v).flatMap(strings);
  return [];
}

function isError(
  t: { is(a: unknown, b: unknown, m?: string): void },
  r: ApiResponse<any>,
  status: number,
  code: string,
) {
  t.is(r.status, status, r.text);
  t.is(r.body.code, code, r.text);
}

forEachDb(({ stack, test }) => {
  test('the routes declared idempotent are exactly the seven money-moving POSTs', (t) => {
    const declared = buildAdminApp(stack().ctx)
      .routes.filter((r) => r.idempotent)
      .map((r) => `${r.method} ${r.path}`);
    t.deepEqual(declared.sort(), [
      'POST /api/v1/delegation/create',
      'POST /api/v1/protocol/agent-sub-tasks',
      'POST /api/v1/protocol/plans/:planId/order',
      'POST /api/v1/protocol/plans/mint',
      'POST /api/v1/protocol/plans/mintExpirable',
      'POST /api/v1/protocol/plans/redeem',
      'POST /api/v1/x402/permissions',
    ]);
  });

  for (const c of ROUTE_CASES) {
    test(`${c.name}: a repeat with the key replays the first answer and makes one effect`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const key = `retry-${randomUUID()}`;
      const before = await w.effects();
      const first = await send(w.caller, w.request, key);
      t.is(first.status, w.status, first.text);
      t.is(first.headers.get(REPLAYED), null);
      t.is(await w.effects(), before + 1);

      for (let i = 0; i < 2; i++) {
        const again = await send(w.caller, w.request, key);
        t.is(again.status, w.status);
        t.deepEqual(again.body, first.body);
        t.is(again.headers.get(REPLAYED), 'true');
        t.regex(again.headers.get('content-type') ?? '', /^application\/json/);
      }
      t.is(await w.effects(), before + 1, 'one effect');

      // One row: the key hashed with its user, the answer sealed (no string of the answer in clear, no key).
      const rows = await keyRows(s, w.caller.userId);
      t.is(rows.length, 1);
      const row = rows[0] ?? {};
      t.like(row, { state: 'done', key_hash: keyHashOf(w.caller.userId, key) });
      t.is(Number(row.response_status), w.status);
      t.regex(row.scope, /^POST \/api\/v1\//);
      const stored = JSON.stringify(row);
      t.false(stored.includes(key));
      for (const v of strings(first.body).filter((x) => x.length >= 8)) t.false(stored.includes(v), v);
      t.is(JSON.parse(s.ctx.box.open(row.response)).body, first.text);
    });

    test(`${c.name}: the key with a different request is 409 BCK.IDEMPOTENCY.0001, no effect`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const key = randomUUID();
      t.is((await send(w.caller, w.request, key)).status, w.status);
      const before = await w.effects();
      const r = await send(w.caller, w.other, key);
      isError(t, r, 409, 'BCK.IDEMPOTENCY.0001');
      t.is(r.headers.get(REPLAYED), null);
      t.is(await w.effects(), before);
      // The first request's answer is still there for its own retries.
      t.is((await send(w.caller, w.request, key)).headers.get(REPLAYED), 'true');
    });

    test(`${c.name}: another user's same key is independent`, async (t) => {
      const s = stack();
      const [a, b] = [await c.prepare(s), await c.prepare(s)];
      const key = 'shared-key';
      const [ea, eb] = [await a.effects(), await b.effects()];
      const ra = await send(a.caller, a.request, key);
      const rb = await send(b.caller, b.request, key);
      for (const r of [ra, rb]) {
        t.is(r.status, a.status, r.text);
        t.is(r.headers.get(REPLAYED), null);
      }
      t.notDeepEqual(ra.body, rb.body);
      t.is(await a.effects(), ea + 1);
      t.is(await b.effects(), eb + 1);
    });

    test(`${c.name}: a 4xx answer is stored and replayed`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const key = randomUUID();
      const before = await w.effects();
      const first = await send(w.caller, w.refused, key);
      t.true(first.status >= 400 && first.status < 500, first.text);
      const again = await send(w.caller, w.refused, key);
      t.is(again.status, first.status);
      t.deepEqual(again.body, first.body, 'the same envelope, uuid and date included');
      t.is(again.headers.get(REPLAYED), 'true');
      t.is(await w.effects(), before);
      const [row] = await keyRows(s, w.caller.userId);
      t.is(Number(row?.response_status), first.status);
    });

    test(`${c.name}: without the header nothing changes`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const before = await w.effects();
      const rs = [await send(w.caller, w.request), await send(w.caller, w.request)];
      t.is(rs[0]?.status, w.status, rs[0]?.text);
      for (const r of rs) t.is(r.headers.get(REPLAYED), null);
      t.is(await w.effects(), before + w.effectsWithoutKey);
      t.deepEqual(await keyRows(s, w.caller.userId), []);
    });

    test(`${c.name}: a malformed key is 400 naming the header, no effect`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const before = await w.effects();
      for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
        const r = await send(w.caller, w.request, key);
        isError(t, r, 400, 'BCK.HTTP.0400');
        t.regex(r.body.details, /header\.idempotency-key/);
      }
      t.is(await w.effects(), before);
      t.is((await send(w.caller, w.request, 'k'.repeat(255))).status, w.status);
    });
  }

  test('order: refused for funds (402), the replay stays 402 after the wallet is funded; one ledger row', async (t) => {
    const s = stack();
    const owner = await s.user();
    const buyer = await s.user();
    const plan = await createPlan(owner.api);
    const path = `/protocol/plans/${plan.planId}/order`;
    const key = randomUUID();
    const poor = await buyer.api.call('POST', path, undefined, { 'idempotency-key': key });
    isError(t, poor, 402, 'BCK.PAYMENT.0001');
    await faucet(s.ctx, buyer.walletAddress, getAddress(TOKEN_ADDRESS), 5_000_000n);
    const replay = await buyer.api.call('POST', path, undefined, { 'idempotency-key': key });
    t.is(replay.status, 402);
    t.deepEqual(replay.body, poor.body);
    t.is(replay.headers.get(REPLAYED), 'true');
    // A new key is a new request: it buys, once.
    const other = randomUUID();
    const bought = await buyer.api.call('POST', path, undefined, { 'idempotency-key': other });
    t.is(bought.status, 200, bought.text);
    t.is(
      (await buyer.api.call('POST', path, undefined, { 'idempotency-key': other })).body.orderId,
      bought.body.orderId,
    );
    const ledger: Record<string, any>[] = await s.ctx.db
      .em()
      .execute('select kind, reference from credit_ledger where plan_id = ? and holder_address = ?', [
        Number(plan.planId),
        buyer.walletAddress,
      ]);
    t.deepEqual(
      ledger.map((r) => [r.kind, r.reference]),
      [['order', bought.body.orderId]],
    );
  });

  test('store: a released key (5xx, crash) can be claimed again; an answered one replays, sealed', async (t) => {
    const ctx = stack().ctx;
    const req = { userId: randomUUID(), scope: 'POST /test', key: 'k1', fingerprint: sha256Hex('a') };
    const first = await claim(ctx, req);
    if (first.type !== 'claimed') return t.fail(first.type);
    t.deepEqual(await claim(ctx, req), { type: 'inProgress' });
    t.deepEqual(await claim(ctx, { ...req, fingerprint: sha256Hex('b') }), { type: 'mismatch' });
    await abandon(ctx, first.id);
    const second = await claim(ctx, req);
    if (second.type !== 'claimed') return t.fail(second.type);
    const answer = { status: 201, headers: { location: '/x' }, body: '{"token":"secret-token-value"}' };
    t.true(await complete(ctx, second.id, answer));
    t.deepEqual(await claim(ctx, req), { type: 'replay', answer });
    t.false(await complete(ctx, second.id, answer), 'completed once');
    await abandon(ctx, second.id);
    t.deepEqual(await claim(ctx, req), { type: 'replay', answer }, 'an answered key is never released');
  });

  test('purge: deletes expired rows only, in batches; an expired row no longer holds its key', async (t) => {
    const s = stack();
    const userId = randomUUID();
    const keep = s.ctx.config.IDEMPOTENCY_KEEP_SECS * 1000;
    const now = Date.now();
    const past = { ...s.ctx, now: () => new Date(now - keep - 60_000) };
    const req = (key: string) => ({ userId, scope: 'POST /purge', key, fingerprint: sha256Hex(key) });
    for (let i = 0; i < 1203; i++) await claim(past, req(`old-${i}`));
    await claim(s.ctx, req('fresh'));
    const expiredClaim = await claim(past, req('reused'));
    t.is(expiredClaim.type, 'claimed');
    // Expired but not purged yet: the key is free again.
    t.is((await claim(s.ctx, req('reused'))).type, 'claimed');

    const n = await purgeExpired(s.ctx, new Date(now));
    t.is(n, 1203);
    const rows: Record<string, any>[] = await s.ctx.db
      .em()
      .execute('select key_hash from idempotency_key where user_id = ? order by key_hash', [userId]);
    t.deepEqual(rows.map((r) => r.key_hash).sort(), [keyHashOf(userId, 'fresh'), keyHashOf(userId, 'reused')].sort());
    t.is(await purgeExpired(s.ctx, new Date(now)), 0);
  });
});
