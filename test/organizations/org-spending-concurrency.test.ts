// Concurrency of spends through an organization wallet: the members of one group spending through two delegations,
// spread over TWO proxy processes on one PostgreSQL (one proxy on SQLite), mode B routes and mode A mints mixed,
// against a group budget that fits exactly K payments; and the wallet unshared in the middle of a burst (several
// rounds of unshare and share again), after which nothing more is charged to the group. On PostgreSQL each unshare
// runs while a spend is held inside its issuance transaction, past its share check (the test holds that spend's
// delegation row), so a payment being in flight does not depend on timing. And x402 settles that need an order
// (paid from the organization wallet for the member) racing routes on one group budget.
//
// Nothing here measures time: the bursts wait on what the database reports. ROUTER_MAX_CONCURRENT_PER_USER is
// raised so the budget, not the per-user limit, decides the race.
import { PlanOrder } from '../../shared/db/entities/index.js';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import {
  createGroupBudget,
  createOrgDelegation,
  groupBudgetJournal,
  groupBudgetRow,
  holdDelegationRow,
  orgSpendingWorld,
  paymentsOfDelegations,
} from '../support/org-spending.js';
import { waitUntil } from '../support/processes.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { RACE_ENV, type User, delegationRow, fund, ledgerBalance, v2Target } from '../support/router-fixtures.js';
import { raceProxies } from '../support/stack.js';
import { balance, paymentRequired, permission, seller } from '../support/x402.js';

const PRICE = 10_000n; // x402: 500 atomic fee, cap charge 2 cents
const FEE = 500n;
const FUNDS = 1_000_000_000n;
const OWN = 5_000_000n;
const N = 80;
const K = 9;
/** The settles racing routes on one budget. */
const ORDER_RACE = { settles: 8, routes: 40, fitRoutes: 5 } as const;
/** Unshare, check, share again: each round is one more chance for a spend to slip past an unshare. */
const ROUNDS = 4;
/** The merchants answer from this process, which also runs the clients: RACE_ENV's generous upstream timeouts. */
const SPEND_RACE_ENV = { ...RACE_ENV, ROUTER_MAX_CONCURRENT_PER_USER: '10000' };

const m = merchantsOfFile(PRICE);

let seq = 0;
const rid = (p: string) => `${p}-${Date.now()}-${++seq}`;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A spend as it was answered: a paid route or an issued credential; its payment id. */
function paidId(r: ApiResponse<any>): string | undefined {
  if (r.status !== 200) return undefined;
  if (r.body?.paid === true) return r.body.payment.paymentId as string;
  if (r.body?.status === 'Issued') return r.body.paymentId as string;
  return undefined;
}

forEachDb(
  ({ kind, stack, test }) => {
    const proxies = () => raceProxies(stack());

    /** Two members of one group, each with a delegation paying from the group's funded wallet. */
    async function team(budgetCents: number) {
      const s = stack();
      const w = await orgSpendingWorld(s, m.chain, { members: 2, funds: FUNDS });
      for (const x of w.members) await fund(s, m.chain, x.user, OWN);
      const budgetId = await createGroupBudget(w.admin, w.orgId, w.groupId, budgetCents);
      const spenders: { user: User; delegationId: string; clients: ApiClient[] }[] = [];
      const urls = await proxies();
      for (const x of w.members) {
        spenders.push({
          user: x.user,
          delegationId: await createOrgDelegation(x.user, w.walletId, 1_000_000),
          clients: urls.map((p) => apiClient(`${p}/api/v1`, x.user.apiKey)),
        });
      }
      return { s, w, budgetId, spenders, delegationIds: spenders.map((x) => x.delegationId) };
    }

    test(`${N} parallel spends (routes and mode A mints) of two members against a group budget fitting exactly ${K}: ${K} paid, the rest 402`, async (t) => {
      const { s, w, budgetId, spenders, delegationIds } = await team(2 * K);
      t.is(spenders[0]?.clients.length, kind === 'postgresql' ? 2 : 1);
      const url = m.v2.url + m.v2.paidPath;
      const target = await v2Target(m.v2);
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) => {
          const sp = spenders[i % spenders.length] as (typeof spenders)[number];
          const api = sp.clients[Math.floor(i / spenders.length) % sp.clients.length] as ApiClient;
          return i % 4 === 3
            ? api.post('/router/payments', {
                delegationId: sp.delegationId,
                protocol: 'x402',
                target,
                resourceUrl: url,
                requestId: rid('mint'),
              })
            : api.post('/router/route', { requestId: rid('route'), delegationId: sp.delegationId, url });
        }),
      );
      t.deepEqual(
        results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => `${r.status} ${r.text}`),
        [],
        'only 200 and 402: no 5xx, no deadlock',
      );
      const paid = results.map(paidId).filter((x): x is string => x !== undefined);
      t.is(paid.length, K);
      t.deepEqual(
        results.filter((r) => r.status === 200 && paidId(r) === undefined).map((r) => r.text),
        [],
        'every 200 is a payment',
      );
      const refused = results.filter((r) => r.status === 402);
      t.is(refused.length, N - K);
      t.deepEqual(
        refused
          .filter(
            (r) => r.body.code !== 'BCK.ROUTER.0003' || r.body.details !== `group budget ${budgetId} is exhausted`,
          )
          .map((r) => r.text),
        [],
        'every refusal names the exhausted group budget',
      );

      const rows = await paymentsOfDelegations(s, delegationIds);
      t.deepEqual(rows.map((r) => r.id).sort(), [...paid].sort(), 'refused spends leave no payment row');
      const charged = rows.reduce((acc, r) => acc + r.capChargedCents, 0n);
      t.is(charged, BigInt(2 * K));
      const budget = await groupBudgetRow(s, budgetId);
      t.is(budget.amountSpentCents, charged, 'group budget = the sum of the payments cap charges');
      const journal = await groupBudgetJournal(s, budgetId);
      t.deepEqual(
        journal.map((j) => [j.kind, j.amountCents]),
        Array.from({ length: K }, () => ['reserve', 2n]),
      );
      t.deepEqual(journal.map((j) => j.reference).sort(), [...paid].sort());
      for (const id of delegationIds) {
        const mine = rows.filter((r) => r.delegationId === id).reduce((acc, r) => acc + r.capChargedCents, 0n);
        t.is((await delegationRow(s, id)).amountSpentCents, mine);
      }
      // Every payment (a route's fee on its 200, a mint's at once) moved price and fee from the organization wallet.
      t.true(rows.every((r) => r.feeStatus === 'settled'));
      t.is(await ledgerBalance(s, w.address), FUNDS - BigInt(K) * (PRICE + FEE));
      const routes = rows.filter((r) => r.mode === 'route').length;
      t.is(m.chain.transfers.filter((x) => same(x.from, w.address)).length, routes);
      for (const sp of spenders) {
        t.is(await ledgerBalance(s, sp.user.walletAddress), OWN, 'the members own wallets never move');
        t.is(m.chain.transfers.filter((x) => same(x.from, sp.user.walletAddress)).length, 0);
      }
    });

    test(`unshare mid-burst, ${ROUNDS} rounds: nothing of the wallet is charged or committed after the unshare returned; every later spend is refused`, async (t) => {
      const { s, w, budgetId, spenders, delegationIds } = await team(1_000_000);
      const url = m.v2.url + m.v2.paidPath;
      const target = await v2Target(m.v2);
      const sharePath = `/organizations/${w.orgId}/wallets/${w.walletId}/groups/${w.groupId}`;
      const committedIds = async () => (await paymentsOfDelegations(s, delegationIds)).map((r) => r.id).sort();
      const WORKERS = 8;
      let stop = false;
      /** When the current round's unshare returned; undefined while the wallet is shared. */
      let unsharedAt: number | undefined;
      const calls: { started: number; ended: number; r: ApiResponse<any> }[] = [];
      const afterUnshare = new Array<number>(WORKERS).fill(0);
      const workers = Array.from({ length: WORKERS }, async (_, i) => {
        const sp = spenders[i % spenders.length] as (typeof spenders)[number];
        const api = sp.clients[Math.floor(i / spenders.length) % sp.clients.length] as ApiClient;
        while (!stop) {
          const started = Date.now();
          const r =
            i % 4 === 3
              ? await api.post('/router/payments', {
                  delegationId: sp.delegationId,
                  protocol: 'x402',
                  target,
                  resourceUrl: url,
                  requestId: rid(`mint${i}`),
                })
              : await api.post('/router/route', { requestId: rid(`burst${i}`), delegationId: sp.delegationId, url });
          calls.push({ started, ended: Date.now(), r });
          const since = unsharedAt;
          if (since !== undefined && started > since) afterUnshare[i] = (afterUnshare[i] ?? 0) + 1;
        }
      });
      /** Per round: when the unshare returned, and when the wallet was shared again (the burst's end, last). */
      const rounds: { unsharedAt: number; resharedAt: number }[] = [];
      let held: Awaited<ReturnType<typeof holdDelegationRow>> | undefined;
      try {
        for (let round = 0; round < ROUNDS; round += 1) {
          // Unshare once the burst is paying (again).
          const paidBefore = (await groupBudgetJournal(s, budgetId)).length;
          t.true(
            await waitUntil(async () => (await groupBudgetJournal(s, budgetId)).length >= paidBefore + 3),
            `round ${round}: the burst paid`,
          );
          // PostgreSQL: a spend is held inside its issuance transaction, past its share check, while the unshare
          // runs, so "in flight" does not depend on timing: the unshare must not return before it committed.
          const gate = kind === 'postgresql' ? await holdDelegationRow(s, delegationIds[0] as string) : undefined;
          held = gate;
          if (gate !== undefined)
            t.true(await waitUntil(gate.budgetSpendWaiting), `round ${round}: a spend is held past its share check`);
          let returned = false;
          const unshare = w.admin.api.del(sharePath).then(async (r) => {
            const at = Date.now();
            returned = true;
            // What had committed when the unshare returned: nothing may commit after it.
            return { r, at, committed: await committedIds() };
          });
          if (gate !== undefined) {
            // Until the unshare returned (it did not wait) or waits on the held spend's locks.
            await waitUntil(async () => returned || (await gate.statementWaiting('%delete%org_wallet_share%')));
            await gate.release();
          }
          const { r: un, at, committed } = await unshare;
          t.is(un.status, 200, un.text);
          afterUnshare.fill(0);
          unsharedAt = at;
          t.true(
            await waitUntil(() => afterUnshare.every((x) => x >= 2)),
            `round ${round}: every worker called after the unshare`,
          );
          const resharedAt = Date.now();
          t.deepEqual(
            await committedIds(),
            committed,
            `round ${round}: no payment committed after the unshare returned`,
          );
          rounds.push({ unsharedAt: at, resharedAt });
          if (round + 1 < ROUNDS) {
            unsharedAt = undefined;
            const re = await w.admin.api.post(sharePath);
            t.is(re.status, 200, re.text);
          }
        }
      } finally {
        await held?.release();
        stop = true;
        await Promise.all(workers);
      }

      const rows = await paymentsOfDelegations(s, delegationIds);
      const journal = await groupBudgetJournal(s, budgetId);
      const isRefusal = (r: ApiResponse<any>) =>
        r.status === 402 &&
        r.body.code === 'BCK.ROUTER.0003' &&
        /no longer available to this member through group/.test(r.body.details);
      for (const [i, { unsharedAt: at, resharedAt }] of rounds.entries()) {
        const final = i === rounds.length - 1;
        // The last round never shares again: every row stamped after its unshare returned would be a spend that
        // got past it. (In an earlier round a spend stamped before the re-share may rightly commit after it: there
        // the committed rows were compared above, before the re-share.)
        if (final) {
          t.deepEqual(
            rows.filter((r) => r.createdAt.getTime() > at).map((r) => `${r.id} ${r.createdAt.toISOString()}`),
            [],
            `no router_payment row created after the unshare returned (${new Date(at).toISOString()})`,
          );
          t.deepEqual(
            journal.filter((j) => j.createdAt.getTime() > at).map((j) => `${j.id} ${j.createdAt.toISOString()}`),
            [],
            'no group_budget_transaction row created after the unshare returned',
          );
        }
        // Calls started after the unshare returned and answered before the wallet was shared again.
        const late = calls.filter((c) => c.started > at && (final || c.ended <= resharedAt));
        t.true(late.length >= 2 * WORKERS, `round ${i}: ${late.length} calls after the unshare`);
        t.deepEqual(
          late.filter((c) => !isRefusal(c.r)).map((c) => `${c.r.status} ${c.r.text}`),
          [],
          `round ${i}: every spend started after the unshare is refused`,
        );
      }
      t.deepEqual(
        calls.filter((c) => paidId(c.r) === undefined && !isRefusal(c.r)).map((c) => `${c.r.status} ${c.r.text}`),
        [],
        'every answer of the burst is a payment or the refusal of the unshared wallet',
      );
      const paid = calls.map((c) => paidId(c.r)).filter((x): x is string => x !== undefined);
      t.true(paid.length >= 3 * ROUNDS);
      t.deepEqual([...paid].sort(), rows.map((r) => r.id).sort());
      // The records agree: budget row = its journal = the payments' cap charges = the delegations'.
      const charged = rows.reduce((acc, r) => acc + r.capChargedCents, 0n);
      t.is((await groupBudgetRow(s, budgetId)).amountSpentCents, charged);
      t.is(
        journal.reduce((acc, j) => acc + j.amountCents, 0n),
        charged,
      );
      t.deepEqual(journal.map((j) => j.reference).sort(), rows.map((r) => r.id).sort());
      let delegated = 0n;
      for (const id of delegationIds) delegated += (await delegationRow(s, id)).amountSpentCents;
      t.is(delegated, charged);
      t.true(rows.every((r) => r.feeStatus === 'settled'));
      t.is(await ledgerBalance(s, w.address), FUNDS - BigInt(rows.length) * (PRICE + FEE));
      for (const sp of spenders) t.is(await ledgerBalance(s, sp.user.walletAddress), OWN);
      t.log(
        `${calls.length} calls: ${paid.length} paid, ${calls.filter((c) => isRefusal(c.r)).length} refused, over ${ROUNDS} rounds`,
      );
    });

    test(`x402 settles needing an order race ${ORDER_RACE.routes} routes on one group budget (one order and ${ORDER_RACE.fitRoutes} routes fit): never over it, every record agrees`, async (t) => {
      // 100 cents an order, 2 a route: the budget fits one order and 5 routes exactly. Which spends win depends on
      // the race; what must hold does not: nothing past the budget, a refusal only when the budget could not take
      // it, and the wallet, the budget, its journal, the delegations, the orders and the credits agreeing.
      const limit = 100 + 2 * ORDER_RACE.fitRoutes;
      const { s, w, budgetId, spenders, delegationIds } = await team(limit);
      const sell = await seller(s); // 1 USDC (100 cents) for 10 credits
      const pr = paymentRequired({ planId: sell.plan.planId });
      const tokens = await Promise.all(
        spenders.map(
          async (sp) =>
            (await permission(sp.user.api, { planId: sell.plan.planId, delegationId: sp.delegationId }))
              .x402AccessToken,
        ),
      );
      const url = m.v2.url + m.v2.paidPath;
      const settles = Array.from({ length: ORDER_RACE.settles }, (_, i) =>
        sell.user.api.post('/x402/settle', {
          paymentRequired: pr,
          x402AccessToken: tokens[i % tokens.length],
          // Every settle burns the 10 credits one order grants: each success needed an order of its own.
          maxAmount: '10',
          agentRequestId: rid('settle'),
        }),
      );
      const routes = Array.from({ length: ORDER_RACE.routes }, (_, i) => {
        const sp = spenders[i % spenders.length] as (typeof spenders)[number];
        const api = sp.clients[Math.floor(i / spenders.length) % sp.clients.length] as ApiClient;
        return api.post('/router/route', { requestId: rid('route'), delegationId: sp.delegationId, url });
      });
      const [settled, routed] = await Promise.all([Promise.all(settles), Promise.all(routes)]);
      t.deepEqual(
        [
          ...settled.filter((r) => r.status !== 201 && r.status !== 402),
          ...routed.filter((r) => r.status !== 200 && r.status !== 402),
        ].map((r) => `${r.status} ${r.text}`),
        [],
        'only successes and 402s: no 5xx, no deadlock',
      );
      const orderIds = settled.filter((r) => r.status === 201).map((r) => r.body.orderId as string);
      const paid = routed.map(paidId).filter((x): x is string => x !== undefined);
      t.true(settled.filter((r) => r.status === 201).every((r) => r.body.success === true));
      const spent = (await groupBudgetRow(s, budgetId)).amountSpentCents;
      t.is(spent, 100n * BigInt(orderIds.length) + 2n * BigInt(paid.length), 'the budget holds exactly what was paid');
      t.true(spent <= BigInt(limit), 'never over the budget');
      const left = BigInt(limit) - spent;
      if (paid.length < ORDER_RACE.routes) t.true(left < 2n, 'a route was refused only when 2 cents no longer fit');
      if (orderIds.length < ORDER_RACE.settles) t.true(left < 100n, 'an order was refused only when 100 no longer fit');
      for (const r of settled.filter((x) => x.status === 402)) {
        t.is(r.body.code, 'BCK.CREDITS.0003');
        t.regex(r.body.details, /group budget/);
      }
      // The journal: one reserve per order (naming it) and per route payment (naming it); nothing released.
      const journal = await groupBudgetJournal(s, budgetId);
      t.deepEqual(
        journal
          .map((j) => [j.kind, j.amountCents, j.reference])
          .sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
        [...orderIds.map((id) => ['reserve', 100n, id]), ...paid.map((id) => ['reserve', 2n, id])].sort((a, b) =>
          String(a[2]).localeCompare(String(b[2])),
        ),
      );
      // Each delegation: its payments' cap charges and 100 per order it paid.
      const rows = await paymentsOfDelegations(s, delegationIds);
      t.deepEqual(rows.map((r) => r.id).sort(), [...paid].sort());
      const orders = await s.ctx.db.em().find(PlanOrder, { id: { $in: orderIds } });
      t.is(orders.length, orderIds.length);
      for (const sp of spenders) {
        const routesCents = rows
          .filter((r) => r.delegationId === sp.delegationId)
          .reduce((acc, r) => acc + r.capChargedCents, 0n);
        const ordersCents = 100n * BigInt(orders.filter((o) => o.buyerUserId === sp.user.userId).length);
        t.is((await delegationRow(s, sp.delegationId)).amountSpentCents, routesCents + ordersCents);
        // The credits each order minted were burnt by its settle; the member's own wallet never moved.
        t.is(await balance(sp.user.api, sell.plan.planId, sp.user.walletAddress), '0');
        t.is(await ledgerBalance(s, sp.user.walletAddress), OWN);
      }
      t.is(
        await ledgerBalance(s, w.address),
        FUNDS - 1_000_000n * BigInt(orderIds.length) - (PRICE + FEE) * BigInt(paid.length),
        'the organization wallet paid every order and every route, nothing else',
      );
      t.log(
        `${orderIds.length} of ${ORDER_RACE.settles} settles ordered, ${paid.length} of ${ORDER_RACE.routes} routes paid`,
      );
    });
  },
  SPEND_RACE_ENV,
  { serial: true },
);
