// A connector holding an access token of the user's `account_access` grant, on SQLite and PostgreSQL, through the
// real processes: it reads the registry and credits for the user exactly as the user's API key does, orders plans
// paid by card from the grant's delegation (never from the wallet), creates svc:card-delegation x402 permissions
// on that delegation only, and reads that delegation alone. Writes and every other route refuse it (403 0030);
// a commerce token reads only its own delegation. The stack runs with API_KEY_CACHE_MS=0 so a revoked grant is
// refused on its very next use (no wait on a cache, no timing asserted).
import { getAddress } from 'viem';
import { AppError } from '../../shared/errors/app-error.js';
import { catalogue } from '../../shared/errors/catalogue.js';
import { orderPlanByCard } from '../../shared/credits/card-order.js';
import {
  CreditLedger,
  CreditLot,
  Delegation,
  DelegationTransaction,
  PlanOrder,
  TokenBalance,
  TokenLedger,
  X402Permission,
} from '../../shared/db/entities/index.js';
import { revokeBinding } from '../../shared/oauth/bindings.js';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { approve, authorizeBody, codeForm, connector, pkce, postForm } from '../support/oauth.js';
import { TOKEN_ADDRESS, attachPlan, createAgent, createPlan, testAddress } from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';
import { delegation, fundUsdc, paymentRequired, permissionBody, seller, type User } from '../support/x402.js';

/** The default plan of the builders: 1 USDC (100 cents) for 10 credits. */
const PRICE_CENTS = 100n;
/** This file's own receiver: the tests of one stack run concurrently, and the builders' default is shared. */
const RECEIVER = getAddress(testAddress(0xacce55));
const WALLET_FUNDS = 5_000_000n;
const GRANT_ONLY = "an account_access token may create only svc:card-delegation permissions on its grant's delegation";

interface Grant {
  readonly token: string;
  readonly grantId: string;
  readonly delegationId: string;
  /** Talks to {base_url} with the access token as the Bearer credential. */
  readonly api: ApiClient;
}

/** A grant of `user` through the authorization code flow: the user approves with their key, the connector
 *  redeems the code with its PKCE verifier at /oauth/token. */
async function grantOf(s: Stack, user: User, terms: Record<string, unknown>): Promise<Grant> {
  const c = await connector(s);
  const p = await pkce();
  const approved = await approve(s, user.apiKey, authorizeBody(c, p, terms));
  if (approved.status !== 201) throw new Error(`authorize: ${approved.status} ${JSON.stringify(approved.body)}`);
  const r = await postForm(s, '/oauth/token', codeForm(c, String(approved.body.code), p.verifier));
  if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
  const token = String(r.body.access_token);
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  return {
    token,
    grantId: String(claims.grant_id),
    delegationId: String(claims.delegation_id),
    api: apiClient(s.baseUrl, token),
  };
}

const accountAccess = (s: Stack, user: User, capCents: number) =>
  grantOf(s, user, { scope: 'account_access', spending_limit_cents: capCents, currency: 'usd' });

/** The error envelope without what differs per answer (correlation id, uuid, date). */
function stripped(body: Record<string, unknown>): Record<string, unknown> {
  const { correlationId: _c, uuid: _u, date: _d, ...rest } = body;
  return rest;
}

/** The whole envelope of `code` as the service writes it, minus the per-answer fields. */
function envelope(
  s: Stack,
  code: keyof typeof catalogue,
  details: string,
  params: Record<string, unknown> = {},
): Record<string, unknown> {
  const def = catalogue[code];
  const reasons: Record<number, string> = {
    401: 'Unauthorized',
    402: 'Payment Required',
    403: 'Forbidden',
    404: 'Not Found',
  };
  return {
    code,
    httpStatus: def.httpStatus,
    message: def.message,
    details,
    error: reasons[def.httpStatus],
    hint: def.hint,
    docsUrl: `${s.ctx.config.DOCS_URL}#${code.toLowerCase().replaceAll('.', '')}`,
    category: def.category,
    retryable: def.retryable,
    params: JSON.stringify(params),
  };
}

const REFUSED_0030 = 'this route does not accept OAuth access tokens of consent type';

function refused0030(s: Stack, kind: 'account_access' | 'commerce') {
  return envelope(s, 'BCK.OAUTH.0030', `${REFUSED_0030} ${kind}`, { consentType: kind });
}

async function usdcOf(s: Stack, address: string): Promise<bigint | undefined> {
  const row = await s.ctx.db
    .em()
    .fork()
    .findOne(TokenBalance, { address, asset: getAddress(TOKEN_ADDRESS) });
  return row?.balance;
}

/** What the grant's delegation was charged, as the delegation and its journal say it. */
async function delegationState(s: Stack, delegationId: string) {
  const em = s.ctx.db.em().fork();
  const d = await em.findOneOrFail(Delegation, { id: delegationId });
  const journal = await em.find(DelegationTransaction, { delegationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const card = await em.find(TokenLedger, { address: `card:${delegationId}` }, { orderBy: { id: 'asc' } });
  return {
    spent: d.amountSpentCents,
    count: d.transactionCount,
    journal: journal.map((x) => [x.kind, x.amountCents, x.reference]),
    card: card.map((x) => [x.delta, x.asset, x.kind, x.reference]),
  };
}

forEachDb(
  ({ stack, test }) => {
    test('registry and credits reads act for the user exactly as the user key does', async (t) => {
      const s = stack();
      const user = await s.user();
      const other = await seller(s);
      // The user's own agent and plans, one of them unlisted: only the user (key or grant) sees it.
      const ownPlan = await createPlan(user.api, { name: 'Own plan' });
      const hidden = await createPlan(user.api, { name: 'Hidden plan' });
      t.is((await user.api.put(`/protocol/plans/${hidden.planId}/list/false`)).status, 200);
      const ownAgent = await createAgent(user.api, { name: 'Own agent' });
      await attachPlan(user.api, ownAgent.agentId, ownPlan.planId);
      await attachPlan(user.api, ownAgent.agentId, hidden.planId);
      const hiddenOfOther = await createPlan(other.user.api, { name: 'Hidden of another' });
      t.is((await other.user.api.put(`/protocol/plans/${hiddenOfOther.planId}/list/false`)).status, 200);
      const grant = await accountAccess(s, user, 500);

      const reads = [
        '/protocol/agents',
        '/protocol/agents?page=1&offset=5&sortBy=createdAt&sortOrder=asc',
        `/protocol/agents/${ownAgent.agentId}`,
        `/protocol/agents/${ownAgent.agentId}/plans`,
        `/protocol/agents/${other.agent.agentId}`,
        `/protocol/agents/${other.agent.agentId}/plans`,
        '/protocol/plans',
        `/protocol/plans/${ownPlan.planId}`,
        `/protocol/plans/${hidden.planId}`,
        `/protocol/plans/${hidden.planId}/agents`,
        `/protocol/plans/${other.plan.planId}`,
        `/protocol/plans/${other.plan.planId}/agents`,
        `/protocol/plans/${hiddenOfOther.planId}`,
        `/protocol/plans/${ownPlan.planId}/balance/${user.walletAddress}`,
        `/protocol/plans/${other.plan.planId}/balance/${other.user.walletAddress}`,
        `/protocol/plans/${other.plan.planId}/balance/${getAddress(testAddress(0x1234))}`,
      ];
      for (const path of reads) {
        const byKey = await user.api.get(path);
        const byGrant = await grant.api.get(path);
        t.is(byGrant.status, byKey.status, path);
        const body = (r: ApiResponse) => (r.status === 200 ? r.body : stripped(r.body as Record<string, unknown>));
        t.deepEqual(body(byGrant), body(byKey), path);
      }
      // What "for the user" means, stated once: the user's own objects, the hidden one included.
      const agents = (await grant.api.get('/protocol/agents')).body;
      t.is(agents.total, 1);
      t.is(agents.agents[0].agentId, ownAgent.agentId);
      const plans = (await grant.api.get('/protocol/plans')).body;
      t.deepEqual(plans.plans.map((p: { planId: string }) => p.planId).sort(), [ownPlan.planId, hidden.planId].sort());
      t.is((await grant.api.get(`/protocol/plans/${hidden.planId}`)).status, 200);
      const notVisible = await grant.api.get(`/protocol/plans/${hiddenOfOther.planId}`);
      t.is(notVisible.status, 404);
      t.is(notVisible.body.code, 'BCK.PROTOCOL.0003');
      t.deepEqual((await grant.api.get(`/protocol/plans/${ownPlan.planId}/balance/${user.walletAddress}`)).body, {
        planId: ownPlan.planId,
        holderAddress: user.walletAddress,
        balance: '0',
        isSubscriber: false,
      });
    });

    test('an account_access token is refused with 403 0030 on writes, token issuance and the other routes', async (t) => {
      const s = stack();
      const user = await s.user();
      const plan = await createPlan(user.api);
      const agent = await createAgent(user.api);
      const grant = await accountAccess(s, user, 500);
      const calls: [string, string, unknown][] = [
        ['POST', '/protocol/agents', {}],
        ['PUT', `/protocol/agents/${agent.agentId}`, {}],
        ['POST', `/protocol/agents/${agent.agentId}/plan/${plan.planId}`, undefined],
        ['POST', '/protocol/plans', {}],
        ['PUT', `/protocol/plans/${plan.planId}`, {}],
        ['PUT', `/protocol/plans/${plan.planId}/list/false`, undefined],
        ['POST', '/protocol/plans/mint', { planId: plan.planId, holderAddress: user.walletAddress, amount: '5' }],
        ['POST', '/protocol/plans/redeem', {}],
        ['GET', `/protocol/token/${plan.planId}/${agent.agentId}`, undefined],
        ['POST', `/protocol/agents/initialize/${agent.agentId}`, {}],
        ['POST', '/delegation/create', { provider: 'stripe', spendingLimitCents: 10, currency: 'usd' }],
        ['GET', '/delegation', undefined],
        ['DELETE', `/delegation/${grant.delegationId}`, undefined],
        ['GET', `/delegation/${grant.delegationId}/transactions`, undefined],
        ['GET', '/x402/permissions', undefined],
        ['POST', '/x402/verify', {}],
        ['POST', '/x402/settle', {}],
      ];
      for (const [method, path, body] of calls) {
        const r = await grant.api.call(method, path, body);
        t.is(r.status, 403, `${method} ${path}`);
        t.deepEqual(stripped(r.body), refused0030(s, 'account_access'), `${method} ${path}`);
      }
      // Nothing was written: the plan is still listed, the grant's delegation still active and uncharged.
      t.like((await user.api.get(`/protocol/plans/${plan.planId}`)).body, { listed: true });
      t.like((await user.api.get(`/delegation/${grant.delegationId}`)).body, {
        status: 'Active',
        amountSpentCents: '0',
      });
    });

    test('an order by an account_access token is paid by card from the grant delegation; the wallet never moves', async (t) => {
      const s = stack();
      const owner = await s.user();
      const plan = await createPlan(owner.api, {
        priceConfig: {
          priceType: 'FIXED_PRICE',
          tokenAddress: TOKEN_ADDRESS,
          amounts: ['1000000'],
          receivers: [RECEIVER],
        },
      });
      const user = await s.user();
      await fundUsdc(s, user.walletAddress, WALLET_FUNDS);
      const grant = await accountAccess(s, user, 250);

      const r = await grant.api.call('POST', `/protocol/plans/${plan.planId}/order`, undefined, {
        'idempotency-key': 'order-1',
      });
      t.is(r.status, 200, JSON.stringify(r.body));
      const orderId = String(r.body.orderId);
      const chargeId = String(r.body.txId);
      t.deepEqual(r.body, {
        orderId,
        planId: plan.planId,
        holderAddress: user.walletAddress,
        creditsGranted: '10',
        amountPaid: '100',
        asset: 'fiat:usd',
        txId: chargeId,
        balance: '10',
      });
      t.regex(orderId, /^[0-9a-f-]{36}$/);

      const em = s.ctx.db.em().fork();
      const order = await em.findOneOrFail(PlanOrder, { id: orderId });
      t.like(order, {
        planId: Number(plan.planId),
        buyerUserId: user.userId,
        buyerAddress: user.walletAddress,
        asset: 'fiat:usd',
        amountPaid: PRICE_CENTS,
        credits: 10n,
        txId: chargeId,
      });
      t.is(await em.count(PlanOrder, { buyerUserId: user.userId }), 1);
      const lots = await em.find(CreditLot, { planId: Number(plan.planId), holderAddress: user.walletAddress });
      t.deepEqual(
        lots.map((l) => [l.remaining, l.expiresAt]),
        [[10n, null]],
      );
      const credits = await em.find(CreditLedger, { planId: Number(plan.planId), holderAddress: user.walletAddress });
      t.deepEqual(
        credits.map((c) => [c.delta, c.kind, c.reference]),
        [[10n, 'order', orderId]],
      );
      t.deepEqual(await delegationState(s, grant.delegationId), {
        spent: PRICE_CENTS,
        count: 1,
        journal: [['reserve', PRICE_CENTS, orderId]],
        card: [[-PRICE_CENTS, 'fiat:usd', 'card_charge:stripe', orderId]],
      });
      const charge = await em.find(TokenLedger, { txId: chargeId }, { orderBy: { delta: 'asc' } });
      t.deepEqual(
        charge.map((x) => [x.address, x.asset, x.delta]),
        [
          [`card:${grant.delegationId}`, 'fiat:usd', -PRICE_CENTS],
          [RECEIVER, 'fiat:usd', PRICE_CENTS],
        ],
      );
      t.is((await em.findOneOrFail(TokenBalance, { address: RECEIVER, asset: 'fiat:usd' })).balance, PRICE_CENTS);
      // The wallet: its USDC untouched, no movement of it beyond the faucet's.
      t.is(await usdcOf(s, user.walletAddress), WALLET_FUNDS);
      t.deepEqual(
        (await em.find(TokenLedger, { address: user.walletAddress })).map((x) => x.kind),
        ['faucet'],
      );
      t.is(await usdcOf(s, RECEIVER), undefined, 'the receiver got no USDC');

      // The same Idempotency-Key replays the answer: no second order, no second charge.
      const again = await grant.api.call('POST', `/protocol/plans/${plan.planId}/order`, undefined, {
        'idempotency-key': 'order-1',
      });
      t.is(again.status, 200);
      t.is(again.headers.get('idempotent-replayed'), 'true');
      t.deepEqual(again.body, r.body);
      t.is((await delegationState(s, grant.delegationId)).spent, PRICE_CENTS);
      t.is(await em.fork().count(PlanOrder, { buyerUserId: user.userId }), 1);

      // The grant's delegation as the connector reads it (and as the user's key reads it).
      const read = await grant.api.get(`/delegation/${grant.delegationId}`);
      t.is(read.status, 200);
      t.deepEqual(read.body, (await user.api.get(`/delegation/${grant.delegationId}`)).body);
      t.like(read.body, { delegationId: grant.delegationId, amountSpentCents: '100', transactionCount: 1 });
      // The key's order of the same plan, under the same Idempotency-Key, is an order of its own (a connector's keys
      // are its grant's, never the user's): paid from the wallet, not a replay of the card order.
      const byKey = await user.api.call('POST', `/protocol/plans/${plan.planId}/order`, undefined, {
        'idempotency-key': 'order-1',
      });
      t.is(byKey.status, 200);
      t.is(byKey.headers.get('idempotent-replayed'), null);
      t.not(byKey.body.orderId, orderId);
      t.like(byKey.body, { asset: getAddress(TOKEN_ADDRESS), amountPaid: '1000000', balance: '20' });
      t.is(await usdcOf(s, user.walletAddress), WALLET_FUNDS - 1_000_000n);
      t.is((await delegationState(s, grant.delegationId)).spent, PRICE_CENTS);
    });

    test('an order over the cap is refused with 402 BCK.ROUTER.0003 and records nothing', async (t) => {
      const s = stack();
      const owner = await s.user();
      const plan = await createPlan(owner.api);
      const user = await s.user();
      await fundUsdc(s, user.walletAddress, WALLET_FUNDS);

      // A cap below one order: refused before anything is written.
      const small = await accountAccess(s, user, 99);
      const tooSmall = await small.api.post(`/protocol/plans/${plan.planId}/order`);
      t.is(tooSmall.status, 402);
      t.deepEqual(
        stripped(tooSmall.body),
        envelope(s, 'BCK.ROUTER.0003', 'delegation budget exceeded', { delegationId: small.delegationId }),
      );
      t.deepEqual(await delegationState(s, small.delegationId), { spent: 0n, count: 0, journal: [], card: [] });

      // A cap of exactly one order: the first is paid, the next finds it exhausted.
      const one = await accountAccess(s, user, 100);
      t.is((await one.api.post(`/protocol/plans/${plan.planId}/order`)).status, 200);
      const exhausted = await one.api.post(`/protocol/plans/${plan.planId}/order`);
      t.is(exhausted.status, 402);
      t.deepEqual(
        stripped(exhausted.body),
        envelope(s, 'BCK.ROUTER.0003', 'delegation is exhausted', { delegationId: one.delegationId }),
      );
      const state = await delegationState(s, one.delegationId);
      t.is(state.spent, PRICE_CENTS);
      t.is(state.journal.length, 1);
      t.is(state.card.length, 1);

      const em = s.ctx.db.em().fork();
      t.is(await em.count(PlanOrder, { buyerUserId: user.userId }), 1);
      t.is(await em.count(CreditLot, { holderAddress: user.walletAddress }), 1);
      t.is(await usdcOf(s, user.walletAddress), WALLET_FUNDS);
    });

    test('a revoked binding is refused: the token at once (401), and the cap of a revoked delegation (402)', async (t) => {
      const s = stack();
      const owner = await s.user();
      const plan = await createPlan(owner.api);
      const user = await s.user();
      const grant = await accountAccess(s, user, 500);
      t.is((await grant.api.get(`/protocol/plans/${plan.planId}`)).status, 200);
      await revokeBinding(s.ctx, user.userId, grant.grantId);

      const r = await grant.api.post(`/protocol/plans/${plan.planId}/order`);
      t.is(r.status, 401);
      t.deepEqual(
        stripped(r.body),
        envelope(s, 'BCK.AUTH.0001', 'the grant of this access token was revoked or has expired'),
      );
      t.regex(r.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
      // A token another process still holds as live meets the spend module's refusal of the revoked delegation.
      const err = await t.throwsAsync(
        orderPlanByCard(
          s.ctx,
          { userId: user.userId, walletAddress: user.walletAddress, delegationId: grant.delegationId },
          plan.planId,
        ),
      );
      t.true(err instanceof AppError);
      if (err instanceof AppError) {
        t.is(err.code, 'BCK.ROUTER.0003');
        t.is(err.details, 'delegation is revoked');
        t.deepEqual(err.params, { delegationId: grant.delegationId });
      }
      t.deepEqual(await delegationState(s, grant.delegationId), { spent: 0n, count: 0, journal: [], card: [] });
      t.is(await s.ctx.db.em().fork().count(PlanOrder, { buyerUserId: user.userId }), 0);
    });

    test('commerce tokens: 403 0030 on orders and registry reads; each OAuth token reads only its own delegation', async (t) => {
      const s = stack();
      const owner = await s.user();
      const plan = await createPlan(owner.api);
      const user = await s.user();
      const commerce = await grantOf(s, user, { scope: 'commerce', spending_limit_cents: 500, currency: 'usd' });
      const account = await accountAccess(s, user, 500);
      const keyDelegation = await delegation(user.api, { provider: 'erc4337', spendingLimitCents: 100 });

      const order = await commerce.api.post(`/protocol/plans/${plan.planId}/order`);
      t.is(order.status, 403);
      t.deepEqual(stripped(order.body), refused0030(s, 'commerce'));
      for (const path of ['/protocol/plans', `/protocol/plans/${plan.planId}`, '/protocol/agents']) {
        const r = await commerce.api.get(path);
        t.is(r.status, 403, path);
        t.deepEqual(stripped(r.body), refused0030(s, 'commerce'), path);
      }
      const permission = await commerce.api.post(
        '/x402/permissions',
        permissionBody({ planId: plan.planId, scheme: 'svc:erc4337', delegationId: commerce.delegationId }),
      );
      t.is(permission.status, 403);
      t.deepEqual(stripped(permission.body), refused0030(s, 'commerce'));

      // Its own delegation: what the user's key reads.
      for (const g of [commerce, account]) {
        const own = await g.api.get(`/delegation/${g.delegationId}`);
        t.is(own.status, 200);
        t.deepEqual(own.body, (await user.api.get(`/delegation/${g.delegationId}`)).body);
      }
      t.like((await commerce.api.get(`/delegation/${commerce.delegationId}`)).body, { provider: 'erc4337' });
      t.like((await account.api.get(`/delegation/${account.delegationId}`)).body, { provider: 'stripe' });
      // Any other id, the same user's included, is the 404 of an unknown delegation, word for word.
      const unknown = '00000000-0000-4000-8000-000000000000';
      const notFound = (id: string) => envelope(s, 'BCK.DELEGATION.0001', `delegation ${id} not found`);
      t.deepEqual(stripped((await user.api.get(`/delegation/${unknown}`)).body), notFound(unknown));
      for (const [g, other] of [
        [commerce, account.delegationId],
        [commerce, keyDelegation],
        [commerce, unknown],
        [account, commerce.delegationId],
        [account, keyDelegation],
      ] as const) {
        const r = await g.api.get(`/delegation/${other}`);
        t.is(r.status, 404, other);
        t.deepEqual(stripped(r.body), notFound(other), other);
      }
      // A malformed id: the same 404 as for the key.
      const malformed = await commerce.api.get('/delegation/not-a-uuid');
      t.is(malformed.status, 404);
      t.deepEqual(stripped(malformed.body), stripped((await user.api.get('/delegation/not-a-uuid')).body));
    });

    test('x402 permissions: only svc:card-delegation on the grant delegation, which then pays the auto-order', async (t) => {
      const s = stack();
      const sell = await seller(s);
      const user = await s.user();
      await fundUsdc(s, user.walletAddress, WALLET_FUNDS);
      const grant = await accountAccess(s, user, 300);
      const otherCard = await delegation(user.api, { provider: 'stripe', spendingLimitCents: 300, currency: 'usd' });
      const planId = sell.plan.planId;

      const refusals: [string, Record<string, unknown>][] = [
        [
          'another delegation of the user',
          permissionBody({ planId, scheme: 'svc:card-delegation', delegationId: otherCard }),
        ],
        ['the erc4337 scheme', permissionBody({ planId, scheme: 'svc:erc4337', delegationId: grant.delegationId })],
        ['no delegation', permissionBody({ planId, scheme: 'svc:card-delegation' })],
        ['erc4337 without a delegation', permissionBody({ planId, scheme: 'svc:erc4337' })],
      ];
      for (const [why, body] of refusals) {
        const r = await grant.api.post('/x402/permissions', body);
        t.is(r.status, 403, why);
        t.deepEqual(
          stripped(r.body),
          envelope(s, 'BCK.OAUTH.0030', GRANT_ONLY, { consentType: 'account_access' }),
          why,
        );
      }
      t.is(await s.ctx.db.em().fork().count(X402Permission, { userId: user.userId }), 0);

      const body = permissionBody({
        planId,
        agentId: sell.agent.agentId,
        scheme: 'svc:card-delegation',
        delegationId: grant.delegationId.toUpperCase(),
      });
      const created = await grant.api.call('POST', '/x402/permissions', body, { 'idempotency-key': 'perm-1' });
      t.is(created.status, 201, JSON.stringify(created.body));
      t.like(created.body, {
        planId,
        agentId: sell.agent.agentId,
        scheme: 'svc:card-delegation',
        ownerAddress: user.walletAddress,
        delegationId: grant.delegationId,
        status: 'Active',
        usedCredits: '0',
      });
      const replay = await grant.api.call('POST', '/x402/permissions', body, { 'idempotency-key': 'perm-1' });
      t.is(replay.status, 201);
      t.is(replay.headers.get('idempotent-replayed'), 'true');
      t.deepEqual(replay.body, created.body);
      t.is(await s.ctx.db.em().fork().count(X402Permission, { userId: user.userId }), 1);

      // The seller settles: the credits fall short, the auto-order charges the grant's card mandate.
      const settled = await sell.user.api.post('/x402/settle', {
        paymentRequired: paymentRequired({ planId, agentId: sell.agent.agentId, scheme: 'svc:card-delegation' }),
        x402AccessToken: created.body.x402AccessToken,
        maxAmount: '4',
        agentRequestId: 'grant-settle-1',
      });
      t.is(settled.status, 201, JSON.stringify(settled.body));
      t.like(settled.body, { success: true, creditsRedeemed: '4', remainingBalance: '6' });
      const orderId = String(settled.body.orderId);
      t.like(await delegationState(s, grant.delegationId), {
        spent: PRICE_CENTS,
        journal: [['reserve', PRICE_CENTS, orderId]],
        card: [[-PRICE_CENTS, 'fiat:usd', 'card_charge:stripe', orderId]],
      });
      t.like(await s.ctx.db.em().fork().findOneOrFail(PlanOrder, { id: orderId }), {
        asset: 'fiat:usd',
        amountPaid: PRICE_CENTS,
        buyerUserId: user.userId,
      });
      t.is(await usdcOf(s, user.walletAddress), WALLET_FUNDS);
    });

    test('parallel orders by one account_access token: exactly the orders the cap fits', async (t) => {
      const s = stack();
      const owner = await s.user();
      const plan = await createPlan(owner.api);
      const user = await s.user();
      await fundUsdc(s, user.walletAddress, WALLET_FUNDS);
      const N = 8;
      const K = 3;
      // Room for K orders and part of another: the part must never be spent.
      const grant = await accountAccess(s, user, Number(PRICE_CENTS) * K + 50);

      const results = await Promise.all(
        Array.from({ length: N }, () => grant.api.post(`/protocol/plans/${plan.planId}/order`)),
      );
      const statuses = results.map((r) => r.status).sort();
      t.deepEqual(
        statuses,
        [...Array(K).fill(200), ...Array(N - K).fill(402)],
        JSON.stringify(results.map((r) => r.body)),
      );
      for (const r of results.filter((x) => x.status === 402)) {
        t.deepEqual(
          stripped(r.body),
          envelope(s, 'BCK.ROUTER.0003', 'delegation budget exceeded', { delegationId: grant.delegationId }),
        );
      }
      const orderIds = results.filter((r) => r.status === 200).map((r) => String(r.body.orderId));
      const state = await delegationState(s, grant.delegationId);
      t.is(state.spent, PRICE_CENTS * BigInt(K));
      t.is(state.count, K);
      t.deepEqual(state.journal.map((x) => x[2]).sort(), [...orderIds].sort());
      t.true(state.journal.every((x) => x[0] === 'reserve' && x[1] === PRICE_CENTS));
      t.deepEqual(state.card.map((x) => x[3]).sort(), [...orderIds].sort());
      const em = s.ctx.db.em().fork();
      t.is(await em.count(PlanOrder, { buyerUserId: user.userId }), K);
      t.is(
        (await em.findOneOrFail(TokenBalance, { address: `card:${grant.delegationId}`, asset: 'fiat:usd' })).balance,
        -PRICE_CENTS * BigInt(K),
      );
      const balance = await grant.api.get(`/protocol/plans/${plan.planId}/balance/${user.walletAddress}`);
      t.is(balance.body.balance, String(10 * K));
      t.is(await usdcOf(s, user.walletAddress), WALLET_FUNDS);
    });
  },
  { API_KEY_CACHE_MS: '0' },
);
