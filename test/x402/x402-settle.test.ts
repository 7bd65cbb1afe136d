// POST /x402/verify and /x402/settle: the facilitator answers, once-per-agentRequestId burns, auto-orders
// against erc4337 and card delegations, revocation, unlisted plans, and tampered tokens (never a 5xx).
import { type Hex, getAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { walletKeyOf } from '../../shared/accounts/users.js';
import { Delegation, PlanOrder, TokenBalance, X402Permission, X402Settlement } from '../../shared/db/entities/index.js';
import { fieldsOf, typedData } from '../../shared/x402/permission-token.js';
import { PermissionToken } from '../../shared/x402/objects.js';
import type { ApiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS, createPlan, testAddress } from '../support/registry-builders.js';
import {
  SANDBOX_NETWORK,
  balance,
  decode,
  delegation,
  encode,
  fundUsdc,
  mint,
  paymentRequired,
  permission,
  seller,
} from '../support/x402.js';

const UNLISTED_MESSAGE = 'The plan is unlisted and cannot be purchased';

function calls(api: ApiClient, token: string, pr: Record<string, unknown>) {
  return {
    verify: (maxAmount: string | number = '1') =>
      api.post('/x402/verify', { paymentRequired: pr, x402AccessToken: token, maxAmount }),
    settle: (agentRequestId: string, maxAmount: string | number = '1') =>
      api.post('/x402/settle', { paymentRequired: pr, x402AccessToken: token, maxAmount, agentRequestId }),
  };
}

forEachDb(({ stack, test }) => {
  test('verify: 201 isValid true with payer and network; never consumes', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    for (let i = 0; i < 3; i += 1) {
      const r = await x.verify('5');
      t.is(r.status, 201);
      t.deepEqual(r.body, { isValid: true, payer: sub.walletAddress, network: SANDBOX_NETWORK });
    }
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5');
    const tooMuch = await x.verify('6');
    t.is(tooMuch.status, 201);
    t.like(tooMuch.body, { isValid: false, invalidReason: 'insufficient_credits', payer: sub.walletAddress });
    t.is(tooMuch.body.code, undefined);
    // maxAmount as a JSON integer is accepted too.
    t.true((await x.verify(2)).body.isValid);
  });

  test('verify/settle: bad shapes are 400; mismatched requirements and non-owners are isValid false', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    const outsider = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const p = await permission(sub.api, { planId: s.plan.planId, agentId: s.agent.agentId });
    const pr = paymentRequired({ planId: s.plan.planId, agentId: s.agent.agentId });
    const good = { paymentRequired: pr, x402AccessToken: p.x402AccessToken, maxAmount: '1', agentRequestId: 'r1' };
    const bad: Record<string, unknown>[] = [
      {},
      { ...good, paymentRequired: undefined },
      { ...good, x402AccessToken: undefined },
      { ...good, maxAmount: undefined },
      { ...good, maxAmount: '0' },
      { ...good, maxAmount: '-1' },
      { ...good, maxAmount: '1.5' },
      { ...good, maxAmount: 1.5 },
      { ...good, maxAmount: '99999999999999999999' },
      { ...good, x402AccessToken: 42 },
      { ...good, paymentRequired: { x402Version: 2, accepts: [] } },
      { ...good, paymentRequired: 'nope' },
    ];
    for (const body of bad) {
      const v = await s.user.api.post('/x402/verify', body);
      t.is(v.status, 400, JSON.stringify(body));
      t.is(v.body.code, 'BCK.HTTP.0400');
      const st = await s.user.api.post('/x402/settle', body);
      t.is(st.status, 400, JSON.stringify(body));
    }
    for (const agentRequestId of [undefined, '', 'x'.repeat(129)]) {
      t.is((await s.user.api.post('/x402/settle', { ...good, agentRequestId })).status, 400);
    }
    const mismatches = [
      paymentRequired({ planId: '999' }),
      paymentRequired({ planId: s.plan.planId, scheme: 'svc:card-delegation', agentId: s.agent.agentId }),
      paymentRequired({ planId: s.plan.planId, network: 'eip155:8453', agentId: s.agent.agentId }),
      paymentRequired({ planId: s.plan.planId }), // bound to an agent: the agent must be named
      paymentRequired({ planId: s.plan.planId, agentId: 'did:nv:other' }),
    ];
    for (const other of mismatches) {
      const v = await calls(s.user.api, p.x402AccessToken, other).verify();
      t.is(v.status, 201);
      t.like(v.body, { isValid: false, invalidReason: 'payment_requirements_mismatch' });
      const st = await calls(s.user.api, p.x402AccessToken, other).settle('mismatch');
      t.is(st.status, 201);
      t.like(st.body, { success: false, errorReason: 'payment_requirements_mismatch', transaction: '' });
    }
    // A list with a foreign option first still matches ours.
    const mixed = {
      ...pr,
      accepts: [{ scheme: 'exact', network: 'base-sepolia', payTo: testAddress(1) }, ...(pr.accepts as unknown[])],
    };
    t.true((await calls(s.user.api, p.x402AccessToken, mixed).verify()).body.isValid);
    // Neither the plan owner nor the agent owner: the subscriber itself and an outsider.
    for (const api of [sub.api, outsider.api]) {
      const v = await calls(api, p.x402AccessToken, pr).verify();
      t.like(v.body, { isValid: false, invalidReason: 'caller_not_authorized_for_permission' });
      const st = await calls(api, p.x402AccessToken, pr).settle('not-mine');
      t.like(st.body, { success: false, errorReason: 'caller_not_authorized_for_permission' });
    }
    // Detaching the plan from the agent ends the permission's use.
    t.is(
      (await s.user.api.del(`/protocol/agents/${encodeURIComponent(s.agent.agentId)}/plan/${s.plan.planId}`)).status,
      200,
    );
    t.like((await calls(s.user.api, p.x402AccessToken, pr).verify()).body, {
      isValid: false,
      invalidReason: 'plan_not_attached_to_agent',
    });
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5');
  });

  test('settle: burns once per agentRequestId; a repeat returns the first result', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 10);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    const first = await x.settle('req-1', '3');
    t.is(first.status, 201);
    t.like(first.body, {
      success: true,
      payer: sub.walletAddress,
      network: SANDBOX_NETWORK,
      creditsRedeemed: '3',
      remainingBalance: '7',
    });
    t.regex(first.body.transaction, /^[0-9a-f-]{36}$/);
    t.is(first.body.duplicate, undefined);
    const repeat = await x.settle('req-1', '3');
    t.is(repeat.status, 201);
    t.like(repeat.body, {
      success: true,
      transaction: first.body.transaction,
      creditsRedeemed: '3',
      remainingBalance: '7',
      duplicate: true,
    });
    const second = await x.settle('req-2', '2');
    t.like(second.body, { success: true, creditsRedeemed: '2', remainingBalance: '5' });
    t.not(second.body.transaction, first.body.transaction);
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5');
    t.is((await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits, '5');
    // Not enough credits and no delegation: 402 with the envelope, nothing burnt, the id stays free.
    const short = await x.settle('req-3', '6');
    t.is(short.status, 402);
    t.is(short.body.code, 'BCK.CREDITS.0003');
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5');
    t.like((await x.settle('req-3', '5')).body, { success: true, remainingBalance: '0' });
    const rows = await stack().ctx.db.em().find(X402Settlement, { permissionHash: p.permissionHash });
    t.deepEqual(rows.map((r) => r.agentRequestId).sort(), ['req-1', 'req-2', 'req-3']);
  });

  test('usedCredits saturates at the 64-bit maximum: a valid burn never fails on the statistic', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 10);
    const p = await permission(sub.api, { planId: s.plan.planId });
    const max = 9_223_372_036_854_775_807n;
    await stack()
      .ctx.db.em()
      .nativeUpdate(X402Permission, { permissionHash: p.permissionHash }, { usedCredits: max - 1n });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    const settled = await x.settle('req-max', '3');
    t.is(settled.status, 201, JSON.stringify(settled.body));
    t.like(settled.body, { success: true, creditsRedeemed: '3', remainingBalance: '7' });
    t.is((await sub.api.get(`/x402/permissions/${p.permissionHash}`)).body.usedCredits, max.toString());
  });

  test('erc4337 auto-order: reserves on the delegation, the wallet pays the plan, then burns', async (t) => {
    const s = await seller(stack()); // 1 USDC (100 cents) for 10 credits, paid to testAddress(0xbeef)
    const sub = await stack().user();
    await fundUsdc(stack(), sub.walletAddress, 1_500_000n);
    const d = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 150 });
    const p = await permission(sub.api, { planId: s.plan.planId, delegationId: d });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    t.true((await x.verify('10')).body.isValid);
    t.like((await x.verify('11')).body, { isValid: false, invalidReason: 'insufficient_credits' });
    const r = await x.settle('auto-1', '4');
    t.is(r.status, 201, JSON.stringify(r.body));
    t.like(r.body, { success: true, creditsRedeemed: '4', remainingBalance: '6' });
    t.is(typeof r.body.orderId, 'string');
    const em = stack().ctx.db.em();
    t.is((await em.findOneOrFail(Delegation, { id: d })).amountSpentCents, 100n);
    t.is(
      (await em.findOneOrFail(TokenBalance, { address: sub.walletAddress, asset: TOKEN_ADDRESS })).balance,
      500_000n,
    );
    const settlement = await em.findOneOrFail(X402Settlement, {
      permissionHash: p.permissionHash,
      agentRequestId: 'auto-1',
    });
    t.is(settlement.orderId, r.body.orderId);
    // Held credits pay the next call: no new order.
    t.like((await x.settle('auto-2', '6')).body, { success: true, remainingBalance: '0' });
    t.is(r.body.orderId, (await x.settle('auto-1', '4')).body.orderId);
    // The cap (150) cannot pay a second order (100 more): refused, 402, nothing reserved.
    const capped = await x.settle('auto-3', '1');
    t.is(capped.status, 402);
    t.is(capped.body.code, 'BCK.CREDITS.0003');
    t.regex(capped.body.details, /budget exceeded/);
    t.is((await em.fork().findOneOrFail(Delegation, { id: d })).amountSpentCents, 100n);
  });

  test('erc4337 auto-order with an empty wallet: 402 and the reservation is released', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 1);
    const d = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 1000 });
    const p = await permission(sub.api, { planId: s.plan.planId, delegationId: d });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    t.like((await x.verify('2')).body, { isValid: false, invalidReason: 'insufficient_credits' });
    const r = await x.settle('empty-1', '2');
    t.is(r.status, 402);
    t.is(r.body.code, 'BCK.CREDITS.0003');
    const rec = (await sub.api.get(`/delegation/${d}`)).body;
    t.like(rec, { amountSpentCents: '0', transactionCount: 1 });
    const txs = (await sub.api.get(`/delegation/${d}/transactions`)).body.transactions.map(
      (x: { kind: string }) => x.kind,
    );
    t.deepEqual(txs, ['release', 'reserve']);
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '1');
  });

  test('card auto-order: the sandbox processor charges the card account, credits are minted, then burnt', async (t) => {
    const s = await seller(stack(), {
      priceConfig: {
        priceType: 'FIXED_PRICE',
        tokenAddress: TOKEN_ADDRESS,
        amounts: ['15000', '5000'],
        receivers: [testAddress(0xa1), testAddress(0xa2)],
      },
    }); // 2 cents in total: 1.5 + 0.5 -> 2 + 0
    const sub = await stack().user();
    const d = await delegation(sub.api, { provider: 'stripe', spendingLimitCents: 2, currency: 'usd' });
    const p = await permission(sub.api, { planId: s.plan.planId, scheme: 'svc:card-delegation', delegationId: d });
    const pr = paymentRequired({ planId: s.plan.planId, scheme: 'svc:card-delegation' });
    const x = calls(s.user.api, p.x402AccessToken, pr);
    t.true((await x.verify('3')).body.isValid);
    const r = await x.settle('card-1', '3');
    t.is(r.status, 201, JSON.stringify(r.body));
    t.like(r.body, { success: true, creditsRedeemed: '3', remainingBalance: '7' });
    const em = stack().ctx.db.em();
    const order = await em.findOneOrFail(PlanOrder, { id: r.body.orderId });
    t.like(order, { asset: 'fiat:usd', amountPaid: 2n, credits: 10n, buyerAddress: sub.walletAddress });
    const balances = await em.find(TokenBalance, { asset: 'fiat:usd' });
    const of = (address: string) => balances.find((b) => b.address === address)?.balance;
    t.is(of(`card:${d}`), -2n, 'the card account is the negative side of the journal');
    t.is(of(getAddress(testAddress(0xa1))), 2n);
    t.is(of(getAddress(testAddress(0xa2))), undefined, 'a part of 0 cents moves nothing');
    t.like((await sub.api.get(`/delegation/${d}`)).body, { amountSpentCents: '2', status: 'Exhausted' });
    // Exhausted cap: the next order is refused.
    t.like((await x.settle('card-2', '8')).body, { code: 'BCK.CREDITS.0003' });
  });

  test('revocation: a revoked permission never verifies or settles again; a revoked delegation refuses the order', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 3);
    await fundUsdc(stack(), sub.walletAddress, 10_000_000n);
    const d = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 10_000 });
    const p = await permission(sub.api, { planId: s.plan.planId, delegationId: d });
    const x = calls(s.user.api, p.x402AccessToken, paymentRequired({ planId: s.plan.planId }));
    t.like((await x.settle('before', '1')).body, { success: true });
    // Revoking the delegation: held credits still pay, an order is refused.
    t.is((await sub.api.del(`/delegation/${d}`)).status, 200);
    t.like((await x.verify('2')).body, { isValid: true });
    t.like((await x.verify('3')).body, { isValid: false, invalidReason: 'insufficient_credits' });
    const refused = await x.settle('needs-order', '3');
    t.is(refused.status, 402);
    t.regex(refused.body.details, /delegation is revoked/);
    // Revoking the permission stops everything, including a repeat of an earlier agentRequestId.
    t.is((await sub.api.del(`/x402/permissions/${p.permissionHash}`)).status, 200);
    const v = await x.verify('1');
    t.is(v.status, 201);
    t.like(v.body, { isValid: false, invalidReason: 'permission_revoked', payer: sub.walletAddress });
    for (const id of ['after', 'before']) {
      const r = await x.settle(id, '1');
      t.is(r.status, 201);
      t.like(r.body, { success: false, errorReason: 'permission_revoked', transaction: '' });
    }
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '2');
    const row = await stack().ctx.db.em().findOneOrFail(X402Permission, { permissionHash: p.permissionHash });
    t.is(row.status, 'Revoked');
    t.truthy(row.revokedAt);
  });

  test('unlisted plan: verify false with the 0062 message and no code; held credits still settle; buying is refused', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 2);
    await fundUsdc(stack(), sub.walletAddress, 10_000_000n);
    const cryptoD = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 10_000 });
    const cardD = await delegation(sub.api, { provider: 'braintree', spendingLimitCents: 10_000 });
    const plain = await permission(sub.api, { planId: s.plan.planId });
    const crypto = await permission(sub.api, { planId: s.plan.planId, delegationId: cryptoD });
    const card = await permission(sub.api, {
      planId: s.plan.planId,
      scheme: 'svc:card-delegation',
      delegationId: cardD,
    });
    t.is((await s.user.api.put(`/protocol/plans/${s.plan.planId}/list/false`)).status, 200);
    const pr = paymentRequired({ planId: s.plan.planId });
    const prCard = paymentRequired({ planId: s.plan.planId, scheme: 'svc:card-delegation' });
    for (const [token, req] of [
      [plain.x402AccessToken, pr],
      [crypto.x402AccessToken, pr],
      [card.x402AccessToken, prCard],
    ] as const) {
      const v = await calls(s.user.api, token, req).verify('1');
      t.is(v.status, 201);
      t.deepEqual(v.body, {
        isValid: false,
        invalidReason: UNLISTED_MESSAGE,
        invalidMessage: `plan ${s.plan.planId} is unlisted`,
        payer: sub.walletAddress,
        network: SANDBOX_NETWORK,
      });
      t.is(v.body.code, undefined);
    }
    // Subscribers keep spending credits they hold.
    t.like((await calls(s.user.api, card.x402AccessToken, prCard).settle('held', '1')).body, {
      success: true,
      remainingBalance: '1',
    });
    // Buying: erc4337 (auto-order or pay-as-you-go) -> 201 success false, message as the reason, no code.
    for (const token of [crypto.x402AccessToken, plain.x402AccessToken]) {
      const r = await calls(s.user.api, token, pr).settle('buy', '2');
      t.is(r.status, 201);
      t.like(r.body, { success: false, errorReason: UNLISTED_MESSAGE });
      t.is(r.body.code, undefined);
    }
    // card-delegation -> 403 BCK.PROTOCOL.0062.
    const c = await calls(s.user.api, card.x402AccessToken, prCard).settle('buy', '2');
    t.is(c.status, 403);
    t.is(c.body.code, 'BCK.PROTOCOL.0062');
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '1');
    t.like((await sub.api.get(`/delegation/${cardD}`)).body, { amountSpentCents: '0' });
    t.like((await sub.api.get(`/delegation/${cryptoD}`)).body, { amountSpentCents: '0' });
  });

  test('tampered tokens: isValid false / success false or 4xx, never 5xx, nothing burnt', async (t) => {
    const s = await seller(stack());
    const other = await createPlan(s.user.api);
    const sub = await stack().user();
    const thief = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    await mint(s.user.api, other.planId, sub.walletAddress, 5);
    const p = await permission(sub.api, { planId: s.plan.planId, agentId: s.agent.agentId });
    const pr = paymentRequired({ planId: s.plan.planId, agentId: s.agent.agentId });
    const original = decode(p.x402AccessToken);
    const mutate = (f: (o: Record<string, any>) => void): string => {
      const o = structuredClone(original);
      f(o);
      return encode(o);
    };
    const sig: string = original.payload.signature;
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'a' ? 'b' : 'a'}${sig.slice(11)}`;
    // Another user's wallet signs the very same fields: same hash, wrong signer.
    const thiefKey = await walletKeyOf(stack().ctx, thief.userId);
    const forged: Hex = await privateKeyToAccount(thiefKey).signTypedData(
      typedData(fieldsOf(PermissionToken.parse(original))),
    );
    // The thief signs its own fields (from = thief) for the victim's plan: names no permission.
    const ownFields = { ...fieldsOf(PermissionToken.parse(original)), owner: thief.walletAddress as `0x${string}` };
    const selfSigned = await privateKeyToAccount(thiefKey).signTypedData(typedData(ownFields));
    const cases: [string, string, Record<string, unknown>][] = [
      [
        'changed planId',
        mutate((o) => {
          o.accepted.planId = other.planId;
        }),
        paymentRequired({ planId: other.planId, agentId: s.agent.agentId }),
      ],
      [
        'changed planId, same requirements',
        mutate((o) => {
          o.accepted.planId = other.planId;
        }),
        pr,
      ],
      [
        'changed nonce (amount-like)',
        mutate((o) => {
          o.payload.authorization.nonce = toHex(BigInt(o.payload.authorization.nonce) + 1n, { size: 32 });
        }),
        pr,
      ],
      [
        'changed resource',
        mutate((o) => {
          o.resource.url = 'https://evil.example.com/';
        }),
        pr,
      ],
      [
        'changed agent',
        mutate((o) => {
          o.accepted.extra.agentId = 'did:nv:other';
        }),
        paymentRequired({ planId: s.plan.planId, agentId: 'did:nv:other' }),
      ],
      [
        'dropped agent',
        mutate((o) => {
          o.accepted.extra = undefined;
        }),
        paymentRequired({ planId: s.plan.planId }),
      ],
      [
        'changed network',
        mutate((o) => {
          o.accepted.network = 'eip155:8453';
        }),
        paymentRequired({ planId: s.plan.planId, network: 'eip155:8453', agentId: s.agent.agentId }),
      ],
      [
        'changed from',
        mutate((o) => {
          o.payload.authorization.from = thief.walletAddress;
        }),
        pr,
      ],
      [
        'flipped signature byte',
        mutate((o) => {
          o.payload.signature = flipped;
        }),
        pr,
      ],
      [
        'uppercased signature',
        mutate((o) => {
          o.payload.signature = `0x${sig.slice(2).toUpperCase()}`;
        }),
        pr,
      ],
      [
        'short signature',
        mutate((o) => {
          o.payload.signature = sig.slice(0, -2);
        }),
        pr,
      ],
      [
        'another user signature',
        mutate((o) => {
          o.payload.signature = forged;
        }),
        pr,
      ],
      [
        'self-signed for the victim plan',
        mutate((o) => {
          o.payload.authorization.from = thief.walletAddress;
          o.payload.signature = selfSigned;
        }),
        pr,
      ],
      [
        'x402Version 1',
        mutate((o) => {
          o.x402Version = 1;
        }),
        pr,
      ],
      [
        'sessionKeys changed',
        mutate((o) => {
          o.payload.authorization.sessionKeys = ['0xdead'];
        }),
        pr,
      ],
      [
        'sessionKeysProvider changed',
        mutate((o) => {
          o.payload.authorization.sessionKeysProvider = 'someone-else';
        }),
        pr,
      ],
      [
        'huge planId',
        mutate((o) => {
          o.accepted.planId = '99999999999999999999';
        }),
        pr,
      ],
      ['truncated base64', p.x402AccessToken.slice(0, p.x402AccessToken.length - 7), pr],
      ['truncated half', p.x402AccessToken.slice(0, Math.floor(p.x402AccessToken.length / 2)), pr],
      ['not JSON', Buffer.from('hello, not json').toString('base64'), pr],
      ['JSON array', encode([1, 2, 3]), pr],
      ['JSON null', encode(null), pr],
      ['not base64', '%%%***', pr],
      ['empty', '', pr],
      ['huge', 'A'.repeat(60_000), pr],
    ];
    let n = 0;
    for (const [what, token, req] of cases) {
      const v = await calls(s.user.api, token, req).verify('1');
      t.true(v.status === 201 || (v.status >= 400 && v.status < 500), `${what}: ${v.status}`);
      if (v.status === 201) t.false(v.body.isValid, what);
      n += 1;
      const st = await calls(s.user.api, token, req).settle(`tamper-${n}`, '1');
      t.true(st.status === 201 || (st.status >= 400 && st.status < 500), `${what}: ${st.status}`);
      if (st.status === 201) t.false(st.body.success, what);
    }
    t.is(await balance(sub.api, s.plan.planId, sub.walletAddress), '5');
    t.is(await balance(sub.api, other.planId, sub.walletAddress), '5');
    // The untouched token still works: the checks above were about the tampering.
    t.true((await calls(s.user.api, p.x402AccessToken, pr).verify('1')).body.isValid);
  });
});
