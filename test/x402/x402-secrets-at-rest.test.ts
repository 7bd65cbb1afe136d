// A copy of the database must not give anyone a bearer credential. The x402 access token is the permission's
// row plus the EIP-712 signature: the row keeps only the signature's SHA-256, so no value of any column of any
// table holds the signature or the token, while verify and settle still accept the token and refuse it with one
// signature byte flipped.
import { createHash } from 'node:crypto';
import { X402Permission } from '../../shared/db/entities/index.js';
import { Reason } from '../../shared/x402/reasons.js';
import { forEachDb } from '../support/matrix.js';
import type { Stack } from '../support/stack.js';
import { balance, decode, encode, mint, paymentRequired, permission, seller } from '../support/x402.js';

/** Every value of every row of every table, as text (what a copy of the database would show). */
async function everyStoredValue(s: Stack): Promise<{ table: string; column: string; value: string }[]> {
  const em = s.ctx.db.em();
  const tables =
    s.kind === 'sqlite'
      ? (await em.execute<{ name: string }[]>("select name from sqlite_master where type = 'table'")).map((r) => r.name)
      : (
          await em.execute<{ table_name: string }[]>(
            "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
          )
        ).map((r) => r.table_name);
  const out: { table: string; column: string; value: string }[] = [];
  for (const table of tables) {
    for (const row of await em.execute<Record<string, unknown>[]>(`select * from "${table}"`)) {
      for (const [column, v] of Object.entries(row)) {
        if (v === null || v === undefined) continue;
        const value = Buffer.isBuffer(v) ? v.toString('hex') : v instanceof Date ? v.toISOString() : String(v);
        out.push({ table, column, value });
      }
    }
  }
  return out;
}

/** The same token with one byte of its signature changed (the byte at `at`, 0-based, of the 65). */
function flipSignatureByte(token: string, at: number): string {
  const t = decode(token);
  const hex: string = t.payload.signature;
  const i = 2 + at * 2;
  const byte = Number.parseInt(hex.slice(i, i + 2), 16) ^ 0x01;
  t.payload.signature = `${hex.slice(0, i)}${byte.toString(16).padStart(2, '0')}${hex.slice(i + 2)}`;
  return encode(t);
}

forEachDb(({ stack, test }) => {
  test('no column of any table holds the permission signature or the x402 access token', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const p = await permission(sub.api, { planId: s.plan.planId, agentId: s.agent.agentId });
    const signature: string = decode(p.x402AccessToken).payload.signature;
    t.regex(signature, /^0x[0-9a-f]{130}$/);
    // Settle once too, so the settlement tables have rows to search.
    const settled = await s.user.api.post('/x402/settle', {
      paymentRequired: paymentRequired({ planId: s.plan.planId, agentId: s.agent.agentId }),
      x402AccessToken: p.x402AccessToken,
      maxAmount: '1',
      agentRequestId: 'at-rest-1',
    });
    t.is(settled.status, 201, settled.text);

    const needles = [p.x402AccessToken, signature.slice(2).toLowerCase(), signature.slice(34, 98).toLowerCase()];
    const values = await everyStoredValue(stack());
    t.true(values.length > 50, 'the search saw the rows');
    const found = values.filter(({ value }) => needles.some((n) => value.toLowerCase().includes(n)));
    t.deepEqual(found, []);

    const row = await stack().ctx.db.em().findOneOrFail(X402Permission, { permissionHash: p.permissionHash });
    t.is(row.signatureHash, createHash('sha256').update(signature, 'utf8').digest('hex'));
  });

  test('verify and settle accept the token and refuse it with a flipped signature byte; nothing is burnt', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const pr = paymentRequired({ planId: s.plan.planId });
    const verify = (token: string) =>
      s.user.api.post('/x402/verify', { paymentRequired: pr, x402AccessToken: token, maxAmount: '1' });
    const settle = (token: string, agentRequestId: string) =>
      s.user.api.post('/x402/settle', { paymentRequired: pr, x402AccessToken: token, maxAmount: '1', agentRequestId });

    // r (byte 0), s (byte 40) and v (byte 64): each names the same permission and is not the signature issued.
    for (const at of [0, 40, 64]) {
      const bad = flipSignatureByte(p.x402AccessToken, at);
      const v = await verify(bad);
      t.is(v.status, 201);
      t.like(v.body, { isValid: false, invalidReason: Reason.invalidSignature, payer: sub.walletAddress });
      const st = await settle(bad, `flipped-${at}`);
      t.true(st.status === 201 || (st.status >= 400 && st.status < 500), `${st.status} ${st.text}`);
      t.not(st.body.success, true);
    }
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5', 'nothing was burnt');

    const ok = await verify(p.x402AccessToken);
    t.deepEqual(ok.body, { isValid: true, payer: sub.walletAddress, network: 'eip155:84532' });
    const done = await settle(p.x402AccessToken, 'genuine-1');
    t.is(done.status, 201, done.text);
    t.like(done.body, { success: true, creditsRedeemed: '1', remainingBalance: '4' });
  });
});
