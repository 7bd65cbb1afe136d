// Identical x402 settles spread over TWO admin processes on one database, with no credits held: the settle's
// unique row is the claim, and the auto-order (cap reservation, payment, plan_order row, credit lot) commits
// with the burn in its transaction, so exactly one plan is bought whichever process each settle reaches. Nothing
// in process memory may be what keeps the second process from buying a second plan.
import {
  CreditLedger,
  CreditLot,
  Delegation,
  DelegationTransaction,
  PlanOrder,
  TokenBalance,
  TokenLedger,
  X402Settlement,
} from '../../shared/db/entities/index.js';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS } from '../support/registry-builders.js';
import { type Stack, secondAdmin } from '../support/stack.js';
import { autoOrderSubscriber, balance, delegation, paymentRequired, permission, seller } from '../support/x402.js';

const N = 30;

/**
 * `N` identical settles at once, alternating between the stack's admin (through the proxy) and the second one.
 * Both processes first answer a verify of the same permission (which consumes nothing), so neither is still
 * opening database connections when the settles arrive and both really race.
 */
async function settleEverywhere(
  stack: Stack,
  viaProxy: ApiClient,
  body: Record<string, unknown>,
): Promise<ApiResponse<any>[]> {
  const other = apiClient(`${(await secondAdmin(stack)).url}/api/v1`, viaProxy.apiKey);
  const { agentRequestId: _a, ...verify } = body;
  for (const r of await Promise.all([viaProxy, other].map((c) => c.post('/x402/verify', verify))))
    if (r.status !== 201) throw new Error(`verify: ${r.status} ${r.text}`);
  return Promise.all(Array.from({ length: N }, (_, i) => (i % 2 === 0 ? viaProxy : other).post('/x402/settle', body)));
}

const strip = ({ duplicate: _d, ...rest }: Record<string, unknown>) => rest;

forEachDb(({ stack, test }) => {
  test(`${N} identical settles over two admin processes, no credits held (svc:erc4337): one plan bought`, async (t) => {
    const { s, sub, d, p } = await autoOrderSubscriber(stack(), 5_000_000n, 1000);
    const results = await settleEverywhere(stack(), s.user.api, {
      paymentRequired: paymentRequired({ planId: s.plan.planId }),
      x402AccessToken: p.x402AccessToken,
      maxAmount: '4',
      agentRequestId: 'everywhere',
    });

    t.deepEqual(
      [...new Set(results.map((r) => r.status))],
      [201],
      JSON.stringify(results.find((r) => r.status !== 201)?.body),
    );
    t.true(results.every((r) => r.body.success === true));
    t.is(results.filter((r) => r.body.duplicate === undefined).length, 1, 'one first result, the rest duplicates');
    const first = strip(results[0]?.body);
    for (const r of results) t.deepEqual(strip(r.body), first);
    t.like(first, { creditsRedeemed: '4', remainingBalance: '6' });
    const orderId = first.orderId;
    if (typeof orderId !== 'string') return t.fail('no orderId in the answer');

    const em = stack().ctx.db.em();
    const planId = Number(s.plan.planId);
    const orders = await em.find(PlanOrder, { buyerUserId: sub.userId });
    t.is(orders.length, 1, 'one plan_order row');
    t.is(orders[0]?.id, orderId);
    const txs = await em.find(DelegationTransaction, { delegationId: d });
    t.deepEqual(
      txs.map((x) => [x.kind, x.amountCents, x.reference]),
      [['reserve', 100n, orderId]],
      'one cap reservation, never released',
    );
    t.like(await em.findOneOrFail(Delegation, { id: d }), { amountSpentCents: 100n, transactionCount: 1 });
    t.is(await em.count(CreditLot, { planId, holderAddress: sub.walletAddress }), 1, 'one order credit lot');
    const ledger = await em.find(CreditLedger, { planId, holderAddress: sub.walletAddress });
    t.deepEqual(ledger.map((l) => [l.kind, l.delta]).sort(), [
      ['order', 10n],
      ['redeem', -4n],
    ]);
    const settlements = await em.find(X402Settlement, { permissionHash: p.permissionHash });
    t.deepEqual(
      settlements.map((x) => [x.id, x.orderId]),
      [[first.transaction, orderId]],
      'one burn',
    );
    t.is(
      (await em.findOneOrFail(TokenBalance, { address: sub.walletAddress, asset: TOKEN_ADDRESS })).balance,
      4_000_000n,
    );
    const debits = (await em.find(TokenLedger, { address: sub.walletAddress })).filter((x) => x.delta < 0n);
    t.deepEqual(
      debits.map((x) => [x.delta, x.kind, x.reference]),
      [[-1_000_000n, 'order', orderId]],
      'the wallet debited once',
    );
    t.is((await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits, '4');
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '6');
  });

  test(`${N} identical settles over two admin processes, no credits held (svc:card-delegation): one card charge`, async (t) => {
    const s = await seller(stack()); // 1 USDC (100 cents) for 10 credits, one receiver
    const sub = await stack().user();
    const d = await delegation(sub.api, { provider: 'stripe', spendingLimitCents: 1000, currency: 'usd' });
    const p = await permission(sub.api, { planId: s.plan.planId, scheme: 'svc:card-delegation', delegationId: d });
    const results = await settleEverywhere(stack(), s.user.api, {
      paymentRequired: paymentRequired({ planId: s.plan.planId, scheme: 'svc:card-delegation' }),
      x402AccessToken: p.x402AccessToken,
      maxAmount: '3',
      agentRequestId: 'card-everywhere',
    });

    t.deepEqual(
      [...new Set(results.map((r) => r.status))],
      [201],
      JSON.stringify(results.find((r) => r.status !== 201)?.body),
    );
    t.true(results.every((r) => r.body.success === true));
    t.is(results.filter((r) => r.body.duplicate === undefined).length, 1);
    const first = strip(results[0]?.body);
    for (const r of results) t.deepEqual(strip(r.body), first);
    t.like(first, { creditsRedeemed: '3', remainingBalance: '7' });
    const orderId = first.orderId;
    if (typeof orderId !== 'string') return t.fail('no orderId in the answer');

    const em = stack().ctx.db.em();
    const planId = Number(s.plan.planId);
    const orders = await em.find(PlanOrder, { buyerUserId: sub.userId });
    t.is(orders.length, 1, 'one plan_order row');
    t.deepEqual(
      orders.map((o) => [o.id, o.asset, o.amountPaid]),
      [[orderId, 'fiat:usd', 100n]],
    );
    const txs = await em.find(DelegationTransaction, { delegationId: d });
    t.deepEqual(
      txs.map((x) => [x.kind, x.amountCents, x.reference]),
      [['reserve', 100n, orderId]],
    );
    t.like(await em.findOneOrFail(Delegation, { id: d }), { amountSpentCents: 100n, transactionCount: 1 });
    const card = `card:${d}`;
    t.is((await em.findOneOrFail(TokenBalance, { address: card, asset: 'fiat:usd' })).balance, -100n);
    const charges = await em.find(TokenLedger, { address: card });
    t.deepEqual(
      charges.map((x) => [x.delta, x.kind, x.reference]),
      [[-100n, 'card_charge:stripe', orderId]],
      'the card charged once',
    );
    t.is(await em.count(CreditLot, { planId, holderAddress: sub.walletAddress }), 1);
    t.is(await em.count(X402Settlement, { permissionHash: p.permissionHash }), 1);
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '7');
  });
});
