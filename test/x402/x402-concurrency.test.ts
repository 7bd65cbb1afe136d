// Concurrent settles (every spend has a concurrency test): the credit lots and the unique
// (permission, agentRequestId) key decide, so parallel settles never burn more than is held nor twice per id.
import { Delegation, PlanOrder, TokenBalance, X402Settlement } from '../../shared/db/entities/index.js';
import { TOKEN_ADDRESS } from '../support/registry-builders.js';
import { forEachDb } from '../support/matrix.js';
import { autoOrderSubscriber, balance, mint, paymentRequired, permission, seller } from '../support/x402.js';

forEachDb(({ stack, test }) => {
  test('100 parallel settles with distinct agentRequestIds against credits for exactly K: K succeed, balance 0', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    const K = 37;
    await mint(s.user.api, s.plan.planId, sub.walletAddress, K);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const pr = paymentRequired({ planId: s.plan.planId });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        s.user.api.post('/x402/settle', {
          paymentRequired: pr,
          x402AccessToken: p.x402AccessToken,
          maxAmount: '1',
          agentRequestId: `req-${i}`,
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 201 && r.body.success === true);
    const refused = results.filter((r) => r.status === 402);
    t.is(
      ok.length,
      K,
      JSON.stringify(results.filter((r) => r.status !== 201 && r.status !== 402).map((r) => [r.status, r.body])),
    );
    t.is(refused.length, 100 - K);
    for (const r of refused) t.is(r.body.code, 'BCK.CREDITS.0003');
    t.is(new Set(ok.map((r) => r.body.transaction)).size, K);
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '0');
    t.is((await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits, String(K));
    t.is(await stack().ctx.db.em().count(X402Settlement, { permissionHash: p.permissionHash }), K);
  });

  test('50 parallel settles with one agentRequestId: one burn, every answer the same success', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 20);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const pr = paymentRequired({ planId: s.plan.planId });
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        s.user.api.post('/x402/settle', {
          paymentRequired: pr,
          x402AccessToken: p.x402AccessToken,
          maxAmount: '3',
          agentRequestId: 'the-one',
        }),
      ),
    );
    t.deepEqual([...new Set(results.map((r) => r.status))], [201]);
    t.true(results.every((r) => r.body.success === true));
    const strip = ({ duplicate: _d, ...rest }: Record<string, unknown>) => rest;
    const first = strip(results[0]?.body);
    for (const r of results) t.deepEqual(strip(r.body), first);
    t.like(first, { creditsRedeemed: '3', remainingBalance: '17' });
    t.is(results.filter((r) => r.body.duplicate === undefined).length, 1);
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '17');
    t.is((await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits, '3');
    t.is(await stack().ctx.db.em().count(X402Settlement, { permissionHash: p.permissionHash }), 1);
  });

  test('20 parallel settles with one agentRequestId and no credits held: ONE auto-order, one reserve, one burn', async (t) => {
    const { s, sub, d, p } = await autoOrderSubscriber(stack(), 5_000_000n, 1000);
    const pr = paymentRequired({ planId: s.plan.planId });
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        s.user.api.post('/x402/settle', {
          paymentRequired: pr,
          x402AccessToken: p.x402AccessToken,
          maxAmount: '4',
          agentRequestId: 'retried',
        }),
      ),
    );
    t.deepEqual(
      [...new Set(results.map((r) => r.status))],
      [201],
      JSON.stringify(results.find((r) => r.status !== 201)?.body),
    );
    t.true(results.every((r) => r.body.success === true));
    t.is(new Set(results.map((r) => r.body.orderId)).size, 1, 'every answer names the one order');
    const em = stack().ctx.db.em();
    t.is(await em.count(PlanOrder, { buyerUserId: sub.userId }), 1, 'one plan bought, not one per retry');
    t.is((await em.findOneOrFail(Delegation, { id: d })).amountSpentCents, 100n, 'one reserve on the delegation');
    t.is(
      (await em.findOneOrFail(TokenBalance, { address: sub.walletAddress, asset: TOKEN_ADDRESS })).balance,
      4_000_000n,
    );
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '6');
  });

  test('settles racing a revoke: every success committed before it, nothing after', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 1000);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const pr = paymentRequired({ planId: s.plan.planId });
    const settles = Array.from({ length: 40 }, (_, i) =>
      s.user.api.post('/x402/settle', {
        paymentRequired: pr,
        x402AccessToken: p.x402AccessToken,
        maxAmount: '1',
        agentRequestId: `race-${i}`,
      }),
    );
    const revoke = sub.api.del(`/x402/permissions/${p.permissionHash}`);
    const [results, revoked] = await Promise.all([Promise.all(settles), revoke]);
    t.is(revoked.status, 200);
    t.true(results.every((r) => r.status === 201));
    const ok = results.filter((r) => r.body.success === true).length;
    const used = (await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits;
    t.is(used, String(ok));
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), String(1000 - ok));
    const after = await s.user.api.post('/x402/settle', {
      paymentRequired: pr,
      x402AccessToken: p.x402AccessToken,
      maxAmount: '1',
      agentRequestId: 'late',
    });
    t.like(after.body, { success: false, errorReason: 'permission_revoked' });
  });
});
