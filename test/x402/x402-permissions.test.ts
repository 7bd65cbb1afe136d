// POST/GET/DELETE /x402/permissions: every status the interface lists, the decisions of the issue (400 for a
// foreign delegation, 403 BCK.PROTOCOL.0062 for an unlisted plan, 402 without funding), ownership and paging.
import { recoverTypedDataAddress } from 'viem';
import { fieldsOf, permissionHashOf, typedData } from '../../shared/x402/permission-token.js';
import { PermissionToken } from '../../shared/x402/objects.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { createPlan, testAddress } from '../support/registry-builders.js';
import { SANDBOX_NETWORK, decode, delegation, mint, permission, permissionBody, seller } from '../support/x402.js';

forEachDb(({ stack, test }) => {
  test('create (credits held): 201 record + token; the token is signed by the wallet and hashes to permissionHash', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const r = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: s.plan.planId, agentId: s.agent.agentId, httpVerb: 'POST' }),
    );
    t.is(r.status, 201, JSON.stringify(r.body));
    t.like(r.body, {
      planId: s.plan.planId,
      agentId: s.agent.agentId,
      httpVerb: 'POST',
      scheme: 'svc:erc4337',
      network: SANDBOX_NETWORK,
      ownerAddress: sub.walletAddress,
      status: 'Active',
      usedCredits: '0',
      resource: { url: 'https://agent.example.com/api/v1/ask', description: 'Ask the agent' },
    });
    t.regex(r.body.permissionHash, /^0x[0-9a-f]{64}$/);
    t.is(r.body.delegationId, undefined);
    t.false(Number.isNaN(Date.parse(r.body.createdAt)));
    const token = PermissionToken.parse(decode(r.body.x402AccessToken));
    t.is(token.x402Version, 2);
    t.is(token.payload.authorization.from as string, sub.walletAddress);
    t.is(token.payload.authorization.sessionKeysProvider, 'payroute');
    t.deepEqual(token.payload.authorization.sessionKeys, []);
    t.deepEqual(token.accepted, {
      scheme: 'svc:erc4337',
      network: SANDBOX_NETWORK,
      planId: s.plan.planId,
      extra: { agentId: s.agent.agentId, httpVerb: 'POST' },
    });
    t.is(permissionHashOf(fieldsOf(token)), r.body.permissionHash);
    const signer = await recoverTypedDataAddress({
      ...typedData(fieldsOf(token)),
      signature: token.payload.signature as `0x${string}`,
    });
    t.is(signer as string, sub.walletAddress);
    // Two permissions for the same fields differ by their nonce.
    const again = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: s.plan.planId, agentId: s.agent.agentId, httpVerb: 'POST' }),
    );
    t.is(again.status, 201);
    t.not(again.body.permissionHash, r.body.permissionHash);
  });

  test("unknown plan or agent: 404 BCK.PROTOCOL.0003 / 0004 (another user's unlisted agent too)", async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    for (const planId of ['999999', 'not-a-plan', '0']) {
      const r = await sub.api.post('/x402/permissions', permissionBody({ planId }));
      t.is(r.status, 404, planId);
      t.is(r.body.code, 'BCK.PROTOCOL.0003');
    }
    const r = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: s.plan.planId, agentId: 'did:nv:nope' }),
    );
    t.is(r.status, 404);
    t.is(r.body.code, 'BCK.PROTOCOL.0004');
    t.is((await s.user.api.put(`/protocol/agents/${encodeURIComponent(s.agent.agentId)}/list/false`)).status, 200);
    const hidden = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: s.plan.planId, agentId: s.agent.agentId }),
    );
    t.is(hidden.status, 404);
    t.is(hidden.body.code, 'BCK.PROTOCOL.0004');
  });

  test('400: bad body, scheme, network, plan not attached, delegation missing / foreign / wrong provider / other plan', async (t) => {
    const s = await seller(stack());
    const other = await createPlan(s.user.api);
    const sub = await stack().user();
    const stranger = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    await mint(s.user.api, other.planId, sub.walletAddress, 5);
    const planId = s.plan.planId;
    const shapes: unknown[] = [
      {},
      [],
      { resource: { url: 'https://x' } },
      { ...permissionBody({ planId }), resource: { url: '' } },
      { ...permissionBody({ planId }), accepted: { scheme: 'svc:erc4337', network: SANDBOX_NETWORK } },
      permissionBody({ planId, scheme: 'exact' }),
      permissionBody({ planId, scheme: 'svc:card' }),
      permissionBody({ planId, network: 'eip155:8453' }),
      permissionBody({ planId, network: 'base-sepolia' }),
      { ...permissionBody({ planId }), delegationConfig: {} },
      { ...permissionBody({ planId }), delegationConfig: { delegationId: 5 } },
    ];
    for (const body of shapes) {
      const r = await sub.api.post('/x402/permissions', body);
      t.is(r.status, 400, JSON.stringify(body));
      t.is(r.body.code, 'BCK.HTTP.0400');
    }
    // The plan exists but is not attached to the agent named.
    const notAttached = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: other.planId, agentId: s.agent.agentId }),
    );
    t.is(notAttached.status, 400);
    t.is(notAttached.body.code, 'BCK.X402.0002');
    // svc:card-delegation requires a delegation.
    const noDelegation = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId, scheme: 'svc:card-delegation' }),
    );
    t.is(noDelegation.status, 400);
    // Another user's delegation, an unknown id, a wrong provider, a delegation restricted to another plan.
    const foreign = await delegation(stranger.api, { provider: 'erc4337', spendingLimitCents: 1000 });
    const cardOfSub = await delegation(sub.api, { provider: 'stripe', spendingLimitCents: 1000 });
    const cryptoOfSub = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 1000 });
    const restricted = await delegation(sub.api, {
      provider: 'erc4337',
      spendingLimitCents: 1000,
      planId: Number(other.planId),
    });
    const revoked = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 1000 });
    await sub.api.del(`/delegation/${revoked}`);
    const cases: [Record<string, unknown>, string][] = [
      [permissionBody({ planId, delegationId: foreign }), 'foreign'],
      [permissionBody({ planId, delegationId: '00000000-0000-4000-8000-000000000000' }), 'unknown'],
      [permissionBody({ planId, delegationId: 'not-a-uuid' }), 'malformed'],
      [permissionBody({ planId, delegationId: cardOfSub }), 'card delegation for erc4337'],
      [
        permissionBody({ planId, scheme: 'svc:card-delegation', delegationId: cryptoOfSub }),
        'erc4337 delegation for card',
      ],
      [permissionBody({ planId, delegationId: restricted }), 'restricted to another plan'],
      [permissionBody({ planId, delegationId: revoked }), 'revoked'],
    ];
    for (const [body, what] of cases) {
      const r = await sub.api.post('/x402/permissions', body);
      t.is(r.status, 400, what);
      t.is(r.body.code, 'BCK.X402.0003', what);
    }
    const ok = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId: other.planId, delegationId: restricted }),
    );
    t.is(ok.status, 201);
    t.is(ok.body.delegationId, restricted);
  });

  test('unlisted plan: 403 BCK.PROTOCOL.0062, even for a holder of its credits', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    t.is((await s.user.api.put(`/protocol/plans/${s.plan.planId}/list/false`)).status, 200);
    const r = await sub.api.post('/x402/permissions', permissionBody({ planId: s.plan.planId }));
    t.is(r.status, 403);
    t.is(r.body.code, 'BCK.PROTOCOL.0062');
    t.is(r.body.httpStatus, 403);
  });

  test('402 BCK.CREDITS.0003 without credits unless a delegation can pay for an order', async (t) => {
    const s = await seller(stack()); // 1 USDC = 100 cents
    const sub = await stack().user();
    const planId = s.plan.planId;
    const none = await sub.api.post('/x402/permissions', permissionBody({ planId }));
    t.is(none.status, 402);
    t.is(none.body.code, 'BCK.CREDITS.0003');
    const small = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 99 });
    t.is((await sub.api.post('/x402/permissions', permissionBody({ planId, delegationId: small }))).status, 402);
    const eur = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 1000, currency: 'eur' });
    t.is((await sub.api.post('/x402/permissions', permissionBody({ planId, delegationId: eur }))).status, 402);
    const bound = await delegation(sub.api, {
      provider: 'erc4337',
      spendingLimitCents: 1000,
      allowedRecipients: [testAddress(7)],
    });
    t.is((await sub.api.post('/x402/permissions', permissionBody({ planId, delegationId: bound }))).status, 402);
    const enough = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: 100 });
    const ok = await sub.api.post('/x402/permissions', permissionBody({ planId, delegationId: enough }));
    t.is(ok.status, 201);
    t.is(ok.body.delegationId, enough);
    const card = await delegation(sub.api, { provider: 'visa', spendingLimitCents: 500 });
    const okCard = await sub.api.post(
      '/x402/permissions',
      permissionBody({ planId, scheme: 'svc:card-delegation', delegationId: card }),
    );
    t.is(okCard.status, 201);
    t.is(okCard.body.scheme, 'svc:card-delegation');
    // A plan priced in a token that is no stablecoin of the environment cannot be paid by a delegation.
    const odd = await createPlan(s.user.api, {
      priceConfig: {
        priceType: 'FIXED_PRICE',
        tokenAddress: testAddress(0xabc),
        amounts: ['10'],
        receivers: [testAddress(1)],
      },
    });
    const oddR = await sub.api.post('/x402/permissions', permissionBody({ planId: odd.planId, delegationId: enough }));
    t.is(oddR.status, 402);
  });

  test('list, read, revoke: owner only, paging, scheme filter, unauthenticated 401', async (t) => {
    const s = await seller(stack());
    const sub = await stack().user();
    const other = await stack().user();
    await mint(s.user.api, s.plan.planId, sub.walletAddress, 5);
    const card = await delegation(sub.api, { provider: 'stripe', spendingLimitCents: 500 });
    const a = await permission(sub.api, { planId: s.plan.planId });
    const b = await permission(sub.api, { planId: s.plan.planId, agentId: s.agent.agentId });
    const c = await permission(sub.api, { planId: s.plan.planId, scheme: 'svc:card-delegation', delegationId: card });
    const all = await sub.api.get('/x402/permissions');
    t.is(all.status, 200);
    t.like(all.body, { total: 3, page: 1, offset: 10 });
    t.deepEqual(
      all.body.permissions.map((p: { permissionHash: string }) => p.permissionHash).sort(),
      [a.permissionHash, b.permissionHash, c.permissionHash].sort(),
    );
    for (const p of all.body.permissions) {
      t.is(p.x402AccessToken, undefined);
      t.is(p.status, 'Active');
      t.is(p.usedCredits, '0');
      t.is(p.ownerAddress, sub.walletAddress);
    }
    const page = await sub.api.get('/x402/permissions?page=2&offset=2');
    t.like(page.body, { total: 3, page: 2, offset: 2 });
    t.is(page.body.permissions.length, 1);
    const cards = await sub.api.get('/x402/permissions?scheme=svc:card-delegation');
    t.is(cards.body.total, 1);
    t.is(cards.body.permissions[0].permissionHash, c.permissionHash);
    t.is(cards.body.permissions[0].delegationId, card);
    const crypto = await sub.api.get(`/x402/permissions?scheme=${encodeURIComponent('svc:erc4337')}`);
    t.is(crypto.body.total, 2);
    for (const q of ['?scheme=exact', '?page=0', '?offset=1000', '?offset=abc']) {
      const r = await sub.api.get(`/x402/permissions${q}`);
      t.is(r.status, 400, q);
    }
    t.is((await other.api.get('/x402/permissions')).body.total, 0);

    const got = await sub.api.get(`/x402/permissions/${b.permissionHash}`);
    t.is(got.status, 200);
    t.like(got.body, { permissionHash: b.permissionHash, agentId: s.agent.agentId, status: 'Active' });
    t.is((await sub.api.get(`/x402/permissions/${b.permissionHash.toUpperCase().replace('0X', '0x')}`)).status, 200);
    for (const r of [
      await other.api.get(`/x402/permissions/${b.permissionHash}`),
      await other.api.del(`/x402/permissions/${b.permissionHash}`),
      await sub.api.get('/x402/permissions/not-a-hash'),
      await sub.api.get(`/x402/permissions/0x${'0'.repeat(64)}`),
      await sub.api.del(`/x402/permissions/0x${'0'.repeat(64)}`),
    ]) {
      t.is(r.status, 404);
      t.is(r.body.code, 'BCK.X402.0001');
    }
    const del = await sub.api.del(`/x402/permissions/${b.permissionHash}`);
    t.is(del.status, 200);
    t.deepEqual(del.body, { success: true, permissionHash: b.permissionHash, status: 'Revoked' });
    t.deepEqual((await sub.api.del(`/x402/permissions/${b.permissionHash}`)).body, del.body);
    t.is((await sub.api.get(`/x402/permissions/${b.permissionHash}`)).body.status, 'Revoked');

    const anon = apiClient(stack().baseUrl);
    for (const r of [
      await anon.get('/x402/permissions'),
      await anon.post('/x402/permissions', permissionBody({ planId: s.plan.planId })),
      await anon.get(`/x402/permissions/${a.permissionHash}`),
      await anon.del(`/x402/permissions/${a.permissionHash}`),
      await anon.post('/x402/verify', {}),
      await anon.post('/x402/settle', {}),
    ]) {
      t.is(r.status, 401);
    }
  });
});
