// Spending through an organization wallet, end to end through the real processes on SQLite and PostgreSQL:
// creating a delegation that names the wallet (the record's fields and every refusal), a member paying the official
// x402 v2 merchant from the wallet through /router/route, mode A and the streaming proxy, where the wallet's ledger
// balance, the group budget (row and journal), the delegation (row and journal) and the router_payment row agree to
// the cent and the member's own wallet is untouched; the refusals (the budget exhausted at an exact fit, no budget
// in the delegation's currency, the wallet unshared, the group deactivated, the member removed), each charging
// nothing; a fee leg released to both the budget and the delegation; x402 auto-orders paid by the organization
// wallet for the member (and refused when the budget, the share or the payee forbids); and the organization wallet
// never paying the spending member's own wallet.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { Delegation, OAuthGrant, PlanOrder, TokenLedger } from '../../shared/db/entities/index.js';
import type { ApiResponse } from '../support/http.js';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { forEachDb } from '../support/matrix.js';
import { approve, authorizeBody, codeGrant, connector, deviceGrant, pkce } from '../support/oauth.js';
import {
  type OrgSpendingWorld,
  createGroupBudget,
  createOrgDelegation,
  groupBudgetJournal,
  groupBudgetRow,
  orgSpendingWorld,
  paymentsOfDelegations,
} from '../support/org-spending.js';
import { makeGroup, makeMember, makeOrg, makeWallet } from '../support/orgs.js';
import {
  EURC,
  FEE_RECIPIENT,
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  USDC,
  type User,
  createDelegation,
  delegationRow,
  delegationTransactions,
  fourOhTwoAgainMerchant,
  fund,
  ledgerBalance,
  paymentRow,
  startMerchants,
  ledgerMoves,
  v2Target,
} from '../support/router-fixtures.js';
import { balance, mint, paymentRequired, permission, seller } from '../support/x402.js';

const PRICE = 10_000n; // 0.01 USDC: fee 500 atomic, cap charge ceil(10,500 / 10,000) = 2 cents
const FEE = 500n;
const FUNDS = 100_000_000n;
const OWN = 7_000_000n; // the member's own wallet: it must never move
let m: Merchants;
let again: ScriptedMerchant;

test.before(async () => {
  m = await startMerchants(PRICE);
  again = await fourOhTwoAgainMerchant(m.v2);
});
test.after.always(async () => {
  await Promise.all([m?.close(), again?.close()]);
});

let n = 0;
const rid = () => `org-${Date.now()}-${++n}`;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const transfersFrom = (address: string) => m.chain.transfers.filter((x) => same(x.from, address));

/** An answer as its status and error code (the text when it has none, to show what came instead). */
const codeOf = (r: ApiResponse<any>) => ({ status: r.status, code: (r.body?.code as string) ?? r.text.slice(0, 300) });

forEachDb(({ stack, test }) => {
  const route = (u: User, delegationId: string, url = m.v2.url + m.v2.paidPath) =>
    u.api.post('/router/route', { requestId: rid(), delegationId, url });

  const movesOf = (paymentId: string) => ledgerMoves(stack(), paymentId);

  /** One member (own wallet funded with OWN), a wallet funded with FUNDS, a budget, and the member's delegation. */
  async function spender(o: { budgetCents?: number; delegationCents?: number; members?: number } = {}) {
    const s = stack();
    const w = await orgSpendingWorld(s, m.chain, { members: o.members ?? 1, funds: FUNDS });
    for (const x of w.members) await fund(s, m.chain, x.user, OWN);
    const budgetId = await createGroupBudget(w.admin, w.orgId, w.groupId, o.budgetCents ?? 1000);
    const member = w.members[0]?.user as User;
    const delegationId = await createOrgDelegation(member, w.walletId, o.delegationCents ?? 1000);
    return { s, w, budgetId, member, delegationId };
  }

  /** Everything a spend moves, to compare before and after a refusal. */
  async function snapshot(w: OrgSpendingWorld, budgetId: string, delegationIds: readonly string[]) {
    const s = stack();
    const d = await Promise.all(delegationIds.map(async (id) => (await delegationRow(s, id)).amountSpentCents));
    const dj = await Promise.all(delegationIds.map(async (id) => (await delegationTransactions(s, id)).length));
    return {
      wallet: await ledgerBalance(s, w.address),
      own: await Promise.all(w.members.map((x) => ledgerBalance(s, x.user.walletAddress))),
      budget: (await groupBudgetRow(s, budgetId)).amountSpentCents,
      journal: (await groupBudgetJournal(s, budgetId)).length,
      delegations: d,
      delegationJournals: dj,
      payments: (await paymentsOfDelegations(s, delegationIds)).length,
      onChain: transfersFrom(w.address).length,
    };
  }

  /** The four records of the spend agree: budget = its journal = the payments' cap charges = the delegations'. */
  async function agree(
    t: import('ava').ExecutionContext,
    budgetId: string,
    delegationIds: readonly string[],
    expectedCents: bigint,
  ) {
    const s = stack();
    const rows = await paymentsOfDelegations(s, delegationIds);
    const charged = rows.reduce((acc, r) => acc + r.capChargedCents, 0n);
    const budget = await groupBudgetRow(s, budgetId);
    const journal = await groupBudgetJournal(s, budgetId);
    let delegations = 0n;
    for (const id of delegationIds) delegations += (await delegationRow(s, id)).amountSpentCents;
    t.is(budget.amountSpentCents, expectedCents, 'group budget');
    t.is(
      journal.reduce((acc, j) => acc + j.amountCents, 0n),
      expectedCents,
      'group budget journal',
    );
    t.is(delegations, expectedCents, 'delegations');
    t.is(charged, expectedCents, 'payments');
  }

  test('delegation/create with an organization wallet: the record names wallet and group; every refusal', async (t) => {
    const s = stack();
    const w = await orgSpendingWorld(s, undefined, { members: 2 });
    const [first, second] = w.members;
    if (first === undefined || second === undefined) throw new Error('two members');
    const member = first.user;
    const create = (u: User, body: Record<string, unknown>) =>
      u.api.post('/delegation/create', { provider: 'erc4337', spendingLimitCents: 500, durationSecs: 3600, ...body });

    // Named by the wallet alone: the one group of the member's it is shared with.
    const a = await create(member, { organizationWalletId: w.walletId });
    t.is(a.status, 201, a.text);
    const rec = await member.api.get(`/delegation/${a.body.delegationId}`);
    t.is(rec.status, 200);
    t.like(rec.body, {
      delegationId: a.body.delegationId,
      provider: 'erc4337',
      spendingLimitCents: '500',
      amountSpentCents: '0',
      organizationWalletId: w.walletId,
      groupId: w.groupId,
    });
    t.like(await delegationRow(s, a.body.delegationId), { orgWalletId: w.walletId, groupId: w.groupId });
    // And with the group named.
    const b = await create(member, { organizationWalletId: w.walletId, groupId: w.groupId, currency: 'usdc' });
    t.is(b.status, 201, b.text);
    t.like(await delegationRow(s, b.body.delegationId), {
      orgWalletId: w.walletId,
      groupId: w.groupId,
      currency: 'usdc',
    });
    // A delegation of the member's own wallet names neither.
    const own = await createDelegation(member, 500);
    const ownRec = await member.api.get(`/delegation/${own}`);
    t.false('organizationWalletId' in ownRec.body);
    t.false('groupId' in ownRec.body);
    t.like(await delegationRow(s, own), { orgWalletId: null, groupId: null });

    // A wallet shared with two of the member's groups: the group must be named.
    const g2 = await makeGroup(s, w.orgId, [first.membershipId], 'Second');
    const both = await makeWallet(s, w.orgId, 'Both', [w.groupId, g2]);
    const ambiguous = await create(member, { organizationWalletId: both.walletId });
    t.deepEqual(codeOf(ambiguous), { status: 400, code: 'BCK.HTTP.0400' });
    t.regex(ambiguous.text, /groupId/);
    const named = await create(member, { organizationWalletId: both.walletId, groupId: g2 });
    t.is(named.status, 201, named.text);
    t.like(await delegationRow(s, named.body.delegationId), { orgWalletId: both.walletId, groupId: g2 });

    // A group that does not qualify: not the member's, the member's but not shared with, unknown.
    const notMine = await makeGroup(s, w.orgId, [second.membershipId], 'Not mine');
    const sharedWithOthers = await makeWallet(s, w.orgId, 'Others too', [w.groupId, notMine]);
    const mineUnshared = await makeGroup(s, w.orgId, [first.membershipId], 'Mine, unshared');
    for (const [walletId, groupId] of [
      [sharedWithOthers.walletId, notMine],
      [w.walletId, mineUnshared],
      [w.walletId, g2],
      [w.walletId, randomUUID()],
    ] as const) {
      const r = await create(member, { organizationWalletId: walletId, groupId });
      t.deepEqual(codeOf(r), { status: 404, code: 'BCK.ORG.0003' }, `group ${groupId}`);
    }

    // A wallet the caller cannot reach: 404 BCK.ORG.0005 whatever the reason.
    const treasury = await makeWallet(s, w.orgId, 'Treasury');
    const othersOnly = await makeWallet(s, w.orgId, 'Others only', [notMine]);
    const deactivated = await makeGroup(s, w.orgId, [first.membershipId], 'Deactivated');
    const ofDeactivated = await makeWallet(s, w.orgId, 'Of a deactivated group', [deactivated]);
    t.is((await w.admin.api.del(`/organizations/${w.orgId}/groups/${deactivated}`)).status, 200);
    const foreignAdmin = await s.user();
    const foreign = await makeOrg(s, foreignAdmin.userId, 'Foreign');
    const foreignGroup = await makeGroup(s, foreign.orgId, [
      await makeMember(s, foreign.orgId, (await s.user()).userId),
    ]);
    const foreignWallet = await makeWallet(s, foreign.orgId, 'Foreign', [foreignGroup]);
    const outsider = await s.user();
    const unreachable: [User, string, string][] = [
      [member, treasury.walletId, 'shared with no group'],
      [member, othersOnly.walletId, "shared with another member's group"],
      [member, ofDeactivated.walletId, 'shared with a deactivated group'],
      [member, foreignWallet.walletId, "another organization's"],
      [member, randomUUID(), 'unknown'],
      [outsider, w.walletId, 'caller not in the organization'],
      [w.admin, w.walletId, 'an Admin not in the group'],
    ];
    for (const [u, walletId, why] of unreachable) {
      const r = await create(u, { organizationWalletId: walletId });
      t.deepEqual(codeOf(r), { status: 404, code: 'BCK.ORG.0005' }, why);
    }
    // A member removed from the organization reaches nothing any more.
    const removed = await w.admin.api.del(`/organizations/${w.orgId}/members/${second.membershipId}`);
    t.is(removed.status, 200, removed.text);
    t.deepEqual(codeOf(await create(second.user, { organizationWalletId: w.walletId })), {
      status: 404,
      code: 'BCK.ORG.0005',
    });

    // Bad bodies.
    for (const [body, why] of [
      [{ groupId: w.groupId }, 'groupId without a wallet'],
      [{ organizationWalletId: 'not-a-uuid' }, 'not a uuid'],
      [{ organizationWalletId: w.walletId, groupId: 'nope' }, 'group not a uuid'],
      [{ organizationWalletId: w.walletId, provider: 'stripe', providerPaymentMethodId: 'pm_1' }, 'fiat provider'],
    ] as const) {
      t.deepEqual(codeOf(await create(member, body)), { status: 400, code: 'BCK.HTTP.0400' }, why);
    }
    // Only the 201s left a delegation.
    const rows = await s.ctx.db.em().find(Delegation, { userId: member.userId });
    t.is(rows.length, 4);
    t.is(rows.filter((r) => r.orgWalletId !== null).length, 3);
  });

  test('commerce route: a grant the member approved on the organization wallet pays from it, charged to the budget', async (t) => {
    const { s, w, budgetId, member } = await spender();
    const wallet = { organization_wallet_id: w.walletId };
    // Both flows: the authorization code (POST /oauth/authorize) and the device decision (POST /oauth/device).
    const grants = [
      await codeGrant(s, member, { ...wallet, spending_limit_cents: 1000 }),
      await deviceGrant(
        s,
        member,
        { spending_limit_cents: '1000', currency: 'usd', duration_secs: '3600' },
        undefined,
        wallet,
      ),
    ];
    for (const g of grants) {
      const d = await s.ctx.db.em().findOneOrFail(Delegation, { id: g.delegationId });
      t.like(d, { orgWalletId: w.walletId, groupId: w.groupId, provider: 'erc4337' });
      const r = await g.api.post('/router/commerce/route', { requestId: randomUUID(), url: m.v2.url + m.v2.paidPath });
      t.is(r.status, 200, r.text);
      t.true(r.body.paid);
      t.deepEqual(await movesOf(r.body.payment.paymentId), [
        ['router', w.address, getAddress(MERCHANT_V2), PRICE],
        ['router_fee', w.address, FEE_RECIPIENT, FEE],
      ]);
      t.is((await delegationRow(s, g.delegationId)).amountSpentCents, 2n);
    }
    t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, 4n);
    t.is(await ledgerBalance(s, w.address), FUNDS - 2n * (PRICE + FEE));
    t.is(await ledgerBalance(s, member.walletAddress), OWN, "the member's own wallet never moved");
  });

  test('commerce consent on an organization wallet: refusals name why, and nothing is granted', async (t) => {
    const { s, w } = await spender();
    const outsider = await s.user();
    const c = await connector(s);
    const refused = async (user: User, extra: Record<string, unknown>, status: number, code: string, re: RegExp) => {
      const r = await approve(s, user.apiKey, authorizeBody(c, await pkce(), extra));
      t.is(r.status, status, JSON.stringify(r.body));
      t.is(r.body.code, code);
      t.regex(String(r.body.details), re);
    };
    await refused(outsider, { organization_wallet_id: w.walletId }, 404, 'BCK.ORG.0005', /not found/);
    const member = w.members[0]?.user as User;
    await refused(member, { organization_wallet_id: randomUUID() }, 404, 'BCK.ORG.0005', /not found/);
    await refused(member, { organization_wallet_id: w.walletId, group_id: randomUUID() }, 404, 'BCK.ORG.0003', /group/);
    await refused(member, { group_id: w.groupId }, 400, 'BCK.HTTP.0400', /only with organization_wallet_id/);
    await refused(
      member,
      { organization_wallet_id: w.walletId, scope: 'account_access' },
      400,
      'BCK.HTTP.0400',
      /only a commerce consent/,
    );
    await refused(member, { organization_wallet_id: 42 }, 400, 'BCK.HTTP.0400', /organization_wallet_id/);
    await refused(member, { organization_wallet_id: 'wallet-1' }, 400, 'BCK.HTTP.0400', /must be UUIDs/);
    t.is(await s.ctx.db.em().count(Delegation, { orgWalletId: w.walletId, userId: { $ne: member.userId } }), 0);
    t.is(await s.ctx.db.em().count(OAuthGrant, { userId: { $in: [member.userId, outsider.userId] } }), 0);
  });

  test('route: a member pays the x402 v2 merchant from the organization wallet; wallet, budget, delegation and payment agree', async (t) => {
    const { s, w, budgetId, member, delegationId } = await spender({ members: 2 });
    const other = w.members[1]?.user as User;
    const otherDelegation = await createOrgDelegation(other, w.walletId, 1000);
    const r = await route(member, delegationId);
    t.is(r.status, 200, r.text);
    t.true(r.body.paid);
    t.deepEqual(r.body.body, { answer: 42 });
    const p = r.body.payment;
    t.is(p.status, 'Settled');
    t.deepEqual(p.fee, { bps: 500, amount: '500', cents: '1', capChargedCents: '2' });
    t.is(p.settlement.recipient, getAddress(MERCHANT_V2));

    // The merchant's library settled from the organization wallet, never from the member's.
    t.deepEqual(
      transfersFrom(w.address).map((x) => [getAddress(x.to), x.value]),
      [[getAddress(MERCHANT_V2), PRICE]],
    );
    t.deepEqual(transfersFrom(member.walletAddress), []);
    t.is(await ledgerBalance(s, w.address), FUNDS - PRICE - FEE);
    t.is(await ledgerBalance(s, member.walletAddress), OWN);
    t.deepEqual(await movesOf(p.paymentId), [
      ['router', w.address, getAddress(MERCHANT_V2), PRICE],
      ['router_fee', w.address, FEE_RECIPIENT, FEE],
    ]);

    t.like(await paymentRow(s, p.paymentId), {
      userId: member.userId,
      delegationId,
      mode: 'route',
      protocol: 'x402',
      status: 'Settled',
      amount: PRICE,
      feeAmount: FEE,
      capChargedCents: 2n,
      feeStatus: 'settled',
    });
    t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, 2n);
    t.deepEqual(
      (await groupBudgetJournal(s, budgetId)).map((j) => [j.kind, j.amountCents, j.reference]),
      [['reserve', 2n, p.paymentId]],
    );
    t.is((await delegationRow(s, delegationId)).amountSpentCents, 2n);
    t.deepEqual(
      (await delegationTransactions(s, delegationId)).map((x) => [x.kind, x.amountCents, x.reference]),
      [['reserve', 2n, p.paymentId]],
    );

    // The other member of the group spends the same budget through their own delegation.
    const r2 = await route(other, otherDelegation);
    t.is(r2.status, 200, r2.text);
    t.true(r2.body.paid);
    t.is((await delegationRow(s, otherDelegation)).amountSpentCents, 2n);
    t.is((await delegationRow(s, delegationId)).amountSpentCents, 2n);
    t.deepEqual(
      (await groupBudgetJournal(s, budgetId)).map((j) => [j.kind, j.amountCents, j.reference]),
      [
        ['reserve', 2n, p.paymentId],
        ['reserve', 2n, r2.body.payment.paymentId],
      ],
    );
    await agree(t, budgetId, [delegationId, otherDelegation], 4n);
    t.is(await ledgerBalance(s, w.address), FUNDS - 2n * (PRICE + FEE));
    t.is(await ledgerBalance(s, other.walletAddress), OWN);
    t.deepEqual(transfersFrom(other.walletAddress), []);
    // What the members read agrees.
    const seen = await member.api.get(`/organizations/${w.orgId}/groups/${w.groupId}/budgets/${budgetId}`);
    t.is(seen.status, 200, seen.text);
    t.like(seen.body.budget, { amountSpentCents: '4', spendingLimitCents: '1000', remainingBudgetCents: '996' });
    t.is((await member.api.get(`/delegation/${delegationId}`)).body.amountSpentCents, '2');
  });

  test('mode A: the credential is signed by the organization wallet; budget and delegation charged, the merchant accepts it', async (t) => {
    const { s, w, budgetId, member, delegationId } = await spender();
    const requestId = rid();
    const r = await member.api.post('/router/payments', {
      delegationId,
      protocol: 'x402',
      target: await v2Target(m.v2),
      resourceUrl: m.v2.url + m.v2.paidPath,
      requestId,
    });
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 'Issued');
    t.is(r.body.fee.capChargedCents, '2');
    const row = await paymentRow(s, r.body.paymentId);
    t.like(row, { userId: member.userId, delegationId, mode: 'credential', capChargedCents: 2n, feeStatus: 'settled' });
    // Mode A's fee leg moves with the merchant leg: both from the organization wallet.
    t.is(await ledgerBalance(s, w.address), FUNDS - PRICE - FEE);
    t.is(await ledgerBalance(s, member.walletAddress), OWN);
    t.deepEqual(
      (await groupBudgetJournal(s, budgetId)).map((j) => [j.kind, j.amountCents, j.reference]),
      [['reserve', 2n, r.body.paymentId]],
    );
    await agree(t, budgetId, [delegationId], 2n);

    const paid = await fetch(m.v2.url + m.v2.paidPath, {
      headers: { [r.body.credential.name]: r.body.credential.value },
    });
    t.is(paid.status, 200, await paid.clone().text());
    t.deepEqual(await paid.json(), { answer: 42 });
    t.deepEqual(
      transfersFrom(w.address).map((x) => x.value),
      [PRICE],
    );
    t.deepEqual(transfersFrom(member.walletAddress), []);
  });

  test('streaming proxy: paid from the organization wallet; the fee leg settles from it once relayed', async (t) => {
    const { s, w, budgetId, member, delegationId } = await spender();
    const r = await member.api.call('GET', '/router/proxy', undefined, {
      'x-router-target-url': m.v2.url + m.v2.paidPath,
      'x-router-delegation-id': delegationId,
      'x-router-request-id': rid(),
    });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { answer: 42 });
    const id = r.headers.get('x-router-payment-id') ?? '';
    t.regex(id, /^[0-9a-f-]{36}$/);
    // The fee leg settles just after the caller read the end of the body.
    let row = await paymentRow(s, id);
    for (let i = 0; i < 600 && row?.feeStatus === 'reserved'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await paymentRow(s, id);
    }
    t.like(row, { mode: 'proxy', status: 'Settled', feeStatus: 'settled', capChargedCents: 2n, delegationId });
    t.deepEqual(await movesOf(id), [
      ['router', w.address, getAddress(MERCHANT_V2), PRICE],
      ['router_fee', w.address, FEE_RECIPIENT, FEE],
    ]);
    t.is(await ledgerBalance(s, w.address), FUNDS - PRICE - FEE);
    t.is(await ledgerBalance(s, member.walletAddress), OWN);
    t.deepEqual(transfersFrom(member.walletAddress), []);
    t.deepEqual(
      transfersFrom(w.address).map((x) => x.value),
      [PRICE],
    );
    await agree(t, budgetId, [delegationId], 2n);
  });

  test('a group budget fitting exactly K payments: K paid, the next 402 naming the group budget, nothing charged', async (t) => {
    const K = 3;
    const { w, budgetId, member, delegationId } = await spender({ budgetCents: 2 * K, delegationCents: 1000 });
    for (let i = 0; i < K; i += 1) {
      const r = await route(member, delegationId);
      t.is(r.status, 200, r.text);
      t.true(r.body.paid);
    }
    const before = await snapshot(w, budgetId, [delegationId]);
    t.is(before.budget, BigInt(2 * K));
    const refused = await route(member, delegationId);
    t.deepEqual(codeOf(refused), { status: 402, code: 'BCK.ROUTER.0003' });
    t.is(refused.body.details, `group budget ${budgetId} is exhausted`);
    t.is(JSON.parse(refused.body.params).groupBudgetId, budgetId);
    t.deepEqual(await snapshot(w, budgetId, [delegationId]), before, 'nothing charged, nothing moved');
    await agree(t, budgetId, [delegationId], BigInt(2 * K));
    const seen = await member.api.get(`/organizations/${w.orgId}/groups/${w.groupId}/budgets/${budgetId}`);
    t.like(seen.body.budget, { status: 'Exhausted', remainingBudgetCents: '0' });

    // One cent more is still short of a 2-cent payment, and the refusal says what is left; two more pay again.
    const patch = (limit: number) =>
      w.admin.api.call('PATCH', `/organizations/${w.orgId}/groups/${w.groupId}/budgets/${budgetId}`, {
        spendingLimitCents: String(limit),
      });
    t.is((await patch(2 * K + 1)).status, 200);
    const short = await route(member, delegationId);
    t.deepEqual(codeOf(short), { status: 402, code: 'BCK.ROUTER.0003' });
    t.is(short.body.details, `group budget ${budgetId} exceeded (1 cents left in this period)`);
    t.deepEqual(await snapshot(w, budgetId, [delegationId]), before);
    t.is((await patch(2 * K + 2)).status, 200);
    t.is((await route(member, delegationId)).status, 200);
    await agree(t, budgetId, [delegationId], BigInt(2 * K + 2));
  });

  test("the delegation's cap refusing after the budget was charged: the budget's charge is rolled back", async (t) => {
    // 3 cents: the first payment (2) fits, and with 1 cent left the second passes the early check and reaches
    // the issuance transaction, where the budget (charged first) takes it and the delegation refuses.
    const { s, w, budgetId, member, delegationId } = await spender({ budgetCents: 1000, delegationCents: 3 });
    t.is((await route(member, delegationId)).status, 200);
    const before = await snapshot(w, budgetId, [delegationId]);
    const r = await route(member, delegationId);
    t.deepEqual(codeOf(r), { status: 402, code: 'BCK.ROUTER.0003' });
    t.is(r.body.details, 'delegation budget exceeded');
    t.is(JSON.parse(r.body.params).delegationId, delegationId);
    t.deepEqual(await snapshot(w, budgetId, [delegationId]), before);
    t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, 2n);
    await agree(t, budgetId, [delegationId], 2n);
  });

  test("no budget in the delegation's currency: 402 BCK.ROUTER.0003, nothing charged", async (t) => {
    const s = stack();
    // A group without any budget.
    const w = await orgSpendingWorld(s, m.chain, { funds: FUNDS });
    const member = w.members[0]?.user as User;
    const d = await createOrgDelegation(member, w.walletId, 1000);
    const r = await route(member, d);
    t.deepEqual(codeOf(r), { status: 402, code: 'BCK.ROUTER.0003' });
    t.is(r.body.details, `group ${w.groupId} has no budget in usd`);
    // A group with a usd budget, and a eur delegation paying EURC (the merchant offers it too).
    const budgetId = await createGroupBudget(w.admin, w.orgId, w.groupId, 1000);
    await fund(s, m.chain, { walletAddress: w.address }, FUNDS, EURC);
    const eur = await createOrgDelegation(member, w.walletId, 1000, { currency: 'eur' });
    const before = await snapshot(w, budgetId, [d, eur]);
    const eurBefore = await ledgerBalance(s, w.address, EURC);
    const r2 = await route(member, eur);
    t.deepEqual(codeOf(r2), { status: 402, code: 'BCK.ROUTER.0003' });
    t.is(r2.body.details, `group ${w.groupId} has no budget in eur`);
    t.deepEqual(await snapshot(w, budgetId, [d, eur]), before);
    t.is(await ledgerBalance(s, w.address, EURC), eurBefore);
    t.is(before.payments, 0);
    t.is(before.onChain, 0);
    t.is(before.budget, 0n);
    // The usd delegation pays once the group has its budget.
    t.is((await route(member, d)).status, 200);
    await agree(t, budgetId, [d, eur], 2n);
  });

  const withdrawals: [string, (w: OrgSpendingWorld) => Promise<ApiResponse<any>>, string][] = [
    [
      'the wallet unshared',
      (w) => w.admin.api.del(`/organizations/${w.orgId}/wallets/${w.walletId}/groups/${w.groupId}`),
      'restore-share',
    ],
    ['the group deactivated', (w) => w.admin.api.del(`/organizations/${w.orgId}/groups/${w.groupId}`), 'reactivate'],
    [
      'the member removed from the organization',
      (w) => w.admin.api.del(`/organizations/${w.orgId}/members/${w.members[0]?.membershipId}`),
      '',
    ],
    [
      'the member removed from the group',
      (w) => w.admin.api.del(`/organizations/${w.orgId}/groups/${w.groupId}/members/${w.members[0]?.membershipId}`),
      'readd',
    ],
  ];
  for (const [what, withdraw, restore] of withdrawals) {
    test(`after ${what}: the next spend (route, mode A) is 402 BCK.ROUTER.0003 and charges nothing`, async (t) => {
      const { s, w, budgetId, member, delegationId } = await spender();
      t.is((await route(member, delegationId)).status, 200);
      const before = await snapshot(w, budgetId, [delegationId]);
      const done = await withdraw(w);
      t.is(done.status, 200, done.text);
      const r = await route(member, delegationId);
      t.deepEqual(codeOf(r), { status: 402, code: 'BCK.ROUTER.0003' });
      t.regex(r.body.details, /no longer available to this member/);
      const minted = await member.api.post('/router/payments', {
        delegationId,
        protocol: 'x402',
        target: await v2Target(m.v2),
        requestId: rid(),
      });
      t.deepEqual(codeOf(minted), { status: 402, code: 'BCK.ROUTER.0003' });
      t.deepEqual(await snapshot(w, budgetId, [delegationId]), before, 'nothing charged, nothing moved');
      await agree(t, budgetId, [delegationId], 2n);
      // Given back, the same delegation spends again.
      const base = `/organizations/${w.orgId}`;
      const restored =
        restore === 'restore-share'
          ? await w.admin.api.post(`${base}/wallets/${w.walletId}/groups/${w.groupId}`)
          : restore === 'reactivate'
            ? await w.admin.api.call('PATCH', `${base}/groups/${w.groupId}`, { active: true })
            : restore === 'readd'
              ? await w.admin.api.post(`${base}/groups/${w.groupId}/members`, {
                  memberId: w.members[0]?.membershipId,
                })
              : undefined;
      if (restored !== undefined) {
        t.true(restored.status === 200 || restored.status === 201, restored.text);
        t.is((await route(member, delegationId)).status, 200);
        await agree(t, budgetId, [delegationId], 4n);
      }
      t.is(await ledgerBalance(s, member.walletAddress), OWN);
    });
  }

  test('a merchant answering the paid hop with 402 again: the fee leg is given back to the budget and the delegation', async (t) => {
    const { s, w, budgetId, member, delegationId } = await spender();
    const r = await route(member, delegationId, `${again.url}/paid`);
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 402);
    t.true(r.body.paid);
    t.is(r.body.payment.status, 'Failed');
    const id = r.body.payment.paymentId as string;
    t.like(await paymentRow(s, id), { status: 'Failed', feeStatus: 'released', capChargedCents: 2n });
    t.deepEqual(
      (await groupBudgetJournal(s, budgetId)).map((j) => [j.kind, j.amountCents, j.reference]),
      [
        ['reserve', 2n, id],
        ['release', -1n, id],
      ],
    );
    t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, 1n);
    t.deepEqual(
      (await delegationTransactions(s, delegationId)).map((x) => [x.kind, x.amountCents, x.reference]),
      [
        ['reserve', 2n, id],
        ['release', -1n, id],
      ],
    );
    t.is((await delegationRow(s, delegationId)).amountSpentCents, 1n);
    // The merchant leg stays paid from the organization wallet; no fee moved.
    t.deepEqual(await movesOf(id), [['router', w.address, getAddress(MERCHANT_V2), PRICE]]);
    t.is(await ledgerBalance(s, w.address), FUNDS - PRICE);
    t.is(await ledgerBalance(s, member.walletAddress), OWN);
  });

  /** A seller's plan (1 USDC, 100 cents, for 10 credits) and a member's permission through an org delegation. */
  async function orgPermission(o: { budgetCents: number; delegationCents?: number; receivers?: string[] }) {
    const s = stack();
    const world = await spender({ budgetCents: o.budgetCents, delegationCents: o.delegationCents ?? 100_000 });
    const priceConfig =
      o.receivers === undefined
        ? {}
        : {
            priceConfig: {
              priceType: 'FIXED_PRICE',
              tokenAddress: USDC.address,
              amounts: ['1000000'],
              receivers: o.receivers,
            },
          };
    const sell = await seller(s, priceConfig);
    const pr = paymentRequired({ planId: sell.plan.planId });
    const call = (path: 'verify' | 'settle', token: string, maxAmount: string) =>
      sell.user.api.post(`/x402/${path}`, {
        paymentRequired: pr,
        x402AccessToken: token,
        maxAmount,
        ...(path === 'settle' ? { agentRequestId: rid() } : {}),
      });
    return { ...world, sell, call };
  }

  test('x402 auto-order: the organization wallet pays the plan, the member holds the credits, budget and cap charged', async (t) => {
    const { s, w, budgetId, member, delegationId, sell, call } = await orgPermission({ budgetCents: 1000 });
    const receiver = sell.plan.priceConfig.receivers[0] as string;
    const receiverBefore = await ledgerBalance(s, receiver);
    // No credits held: the permission is made because the delegation can pay for an order.
    const p = await permission(member.api, { planId: sell.plan.planId, delegationId });
    const verify = await call('verify', p.x402AccessToken, '2');
    t.is(verify.status, 201, verify.text);
    t.true(verify.body.isValid, verify.text);
    const r = await call('settle', p.x402AccessToken, '2');
    t.is(r.status, 201, r.text);
    t.like(r.body, { success: true, creditsRedeemed: '2', remainingBalance: '8' });
    const orderId = r.body.orderId as string;
    // The organization wallet paid the receiver; the member's own wallet never moved.
    t.is(await ledgerBalance(s, w.address), FUNDS - 1_000_000n);
    t.is(await ledgerBalance(s, receiver), receiverBefore + 1_000_000n);
    t.is(await ledgerBalance(s, member.walletAddress), OWN);
    const moves = await s.ctx.db.em().find(TokenLedger, { reference: orderId }, { orderBy: { delta: 'asc' } });
    t.deepEqual(
      moves.map((x) => [x.kind, x.address.toLowerCase(), x.delta]),
      [
        ['order', w.address.toLowerCase(), -1_000_000n],
        ['order', receiver.toLowerCase(), 1_000_000n],
      ],
    );
    // The order and the credits are the member's.
    const order = await s.ctx.db.em().findOneOrFail(PlanOrder, { id: orderId });
    t.like(order, { buyerUserId: member.userId, amountPaid: 1_000_000n });
    t.is(order.buyerAddress.toLowerCase(), member.walletAddress.toLowerCase());
    t.is(await balance(member.api, sell.plan.planId, member.walletAddress), '8');
    // The price in cents on the group budget (its journal names the order) and on the delegation.
    t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, 100n);
    t.deepEqual(
      (await groupBudgetJournal(s, budgetId)).map((j) => [j.kind, j.amountCents, j.reference]),
      [['reserve', 100n, orderId]],
    );
    t.is((await delegationRow(s, delegationId)).amountSpentCents, 100n);
    t.deepEqual(
      (await delegationTransactions(s, delegationId)).map((x) => [x.kind, x.amountCents]),
      [['reserve', 100n]],
    );
  });

  test('x402 auto-order refusals: a budget too small, the wallet unshared, a plan paying the member; nothing moves', async (t) => {
    // The group budget (50 cents) cannot take one order (100): the settle is refused and nothing is charged.
    {
      const { s, w, budgetId, member, delegationId, sell, call } = await orgPermission({ budgetCents: 50 });
      const p = await permission(member.api, { planId: sell.plan.planId, delegationId });
      const before = await snapshot(w, budgetId, [delegationId]);
      const r = await call('settle', p.x402AccessToken, '2');
      t.deepEqual(codeOf(r), { status: 402, code: 'BCK.CREDITS.0003' });
      t.regex(r.body.details, /group budget/);
      t.deepEqual(await snapshot(w, budgetId, [delegationId]), before, 'nothing charged, nothing moved');
      t.is(await s.ctx.db.em().count(PlanOrder, { buyerUserId: member.userId }), 0);
    }
    // The wallet unshared after the permission was made: verify says so, settle refuses, nothing moves.
    {
      const { s, w, budgetId, member, delegationId, sell, call } = await orgPermission({ budgetCents: 1000 });
      const p = await permission(member.api, { planId: sell.plan.planId, delegationId });
      const un = await w.admin.api.del(`/organizations/${w.orgId}/wallets/${w.walletId}/groups/${w.groupId}`);
      t.is(un.status, 200, un.text);
      const before = await snapshot(w, budgetId, [delegationId]);
      const verify = await call('verify', p.x402AccessToken, '2');
      t.is(verify.status, 201);
      t.false(verify.body.isValid);
      t.regex(verify.body.invalidMessage, /no longer available to this member/);
      const r = await call('settle', p.x402AccessToken, '2');
      t.deepEqual(codeOf(r), { status: 402, code: 'BCK.CREDITS.0003' });
      t.regex(r.body.details, /no longer available to this member/);
      t.deepEqual(await snapshot(w, budgetId, [delegationId]), before);
      t.is(await s.ctx.db.em().count(PlanOrder, { buyerUserId: member.userId }), 0);
      // A credit held still pays a settle that needs no order.
      await mint(sell.user.api, sell.plan.planId, member.walletAddress, 1);
      const one = await call('settle', p.x402AccessToken, '1');
      t.is(one.status, 201, one.text);
      t.true(one.body.success);
    }
    // A plan whose receiver is the member's own wallet: the organization wallet never pays it.
    {
      const world = await spender({ budgetCents: 1000, delegationCents: 100_000 });
      const { s, w, budgetId, member, delegationId } = world;
      const sell = await seller(s, {
        priceConfig: {
          priceType: 'FIXED_PRICE',
          tokenAddress: USDC.address,
          amounts: ['1000000'],
          receivers: [member.walletAddress],
        },
      });
      const before = await snapshot(w, budgetId, [delegationId]);
      const none = await member.api.post('/x402/permissions', {
        resource: { url: 'https://agent.example.com/api/v1/ask' },
        accepted: { scheme: 'svc:erc4337', network: 'eip155:84532', planId: sell.plan.planId },
        delegationConfig: { delegationId },
      });
      t.deepEqual(codeOf(none), { status: 402, code: 'BCK.CREDITS.0003' });
      t.regex(none.body.details, /does not pay its member's own wallet/);
      t.deepEqual(await snapshot(w, budgetId, [delegationId]), before);
    }
  });

  test("a merchant naming the spending member's own wallet as payee: refused, the organization wallet never pays it", async (t) => {
    const { s, w, budgetId, member, delegationId } = await spender({ budgetCents: 1000 });
    const target = await v2Target(m.v2);
    const accepts = (target.accepts as Record<string, unknown>[]).map((a) => ({ ...a, payTo: member.walletAddress }));
    const before = await snapshot(w, budgetId, [delegationId]);
    const r = await member.api.post('/router/payments', {
      delegationId,
      protocol: 'x402',
      target: { ...target, accepts },
      resourceUrl: m.v2.url + m.v2.paidPath,
      requestId: rid(),
    });
    t.deepEqual(codeOf(r), { status: 400, code: 'BCK.ROUTER.0001' });
    t.regex(r.body.details, /spending member's own wallet/);
    t.is(JSON.parse(r.body.params).reason, 'payee_is_spender');
    t.deepEqual(await snapshot(w, budgetId, [delegationId]), before);
    t.is((await paymentsOfDelegations(s, [delegationId])).length, 0);
  });
}, PAID_ENV);
