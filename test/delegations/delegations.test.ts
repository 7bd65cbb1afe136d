import { type JSONWebKeySet, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { Delegation, DelegationTransaction } from '../../shared/db/entities/index.js';
import { reserve, release } from '../../shared/delegations/cap.js';
import { forEachDb } from '../support/matrix.js';

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

forEachDb(({ stack, test }) => {
  test('create erc4337: 201 with a delegationId and no token; record fields', async (t) => {
    const u = await stack().user();
    const r = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 500,
      durationSecs: 3600,
    });
    t.is(r.status, 201);
    t.deepEqual(Object.keys(r.body), ['delegationId']);
    const g = await u.api.get(`/delegation/${r.body.delegationId}`);
    t.is(g.status, 200);
    t.like(g.body, {
      delegationId: r.body.delegationId,
      provider: 'erc4337',
      status: 'Active',
      spendingLimitCents: '500',
      amountSpentCents: '0',
      remainingBudgetCents: '500',
      currency: 'usd',
      transactionCount: 0,
    });
    const expires = Date.parse(g.body.expiresAt) - Date.parse(g.body.createdAt);
    t.true(Math.abs(expires - 3_600_000) < 2000);
    t.is(g.body.apiKeyId, undefined);
  });

  test('fiat providers return a service JWT that verifies against the published JWKS', async (t) => {
    const u = await stack().user();
    for (const provider of ['stripe', 'braintree', 'visa']) {
      const r = await u.api.post('/delegation/create', {
        provider,
        spendingLimitCents: '12345',
        durationSecs: 600,
        currency: 'eur',
        providerPaymentMethodId: 'pm_test_1',
      });
      t.is(r.status, 201);
      t.is(typeof r.body.delegationToken, 'string');
      const jwks = (await (await fetch(`${stack().proxyUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      const header = decodeProtectedHeader(r.body.delegationToken);
      t.is(header.alg, 'ES256');
      t.truthy(header.kid);
      const { payload } = await jwtVerify(r.body.delegationToken, createLocalJWKSet(jwks), {
        audience: 'payroute:delegation',
      });
      t.is(payload.delegationId, r.body.delegationId);
      t.is(payload.spendingLimitCents, '12345');
      t.is(payload.currency, 'eur');
      t.is(payload.sub, u.userId);
      t.true(typeof payload.exp === 'number' && Math.abs(payload.exp * 1000 - (Date.now() + 600_000)) < 5000);
    }
  });

  test('bad input is 400 with the envelope', async (t) => {
    const u = await stack().user();
    const bad: unknown[] = [
      {},
      { provider: 'paypal', spendingLimitCents: 1, durationSecs: 1 },
      { provider: 'erc4337', spendingLimitCents: 0, durationSecs: 1 },
      { provider: 'erc4337', spendingLimitCents: -5, durationSecs: 1 },
      { provider: 'erc4337', spendingLimitCents: '99999999999999999999', durationSecs: 1 },
      { provider: 'erc4337', spendingLimitCents: 1.5, durationSecs: 1 },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 0 },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: '60' },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 60, currency: 'btc' },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 60, allowedRecipients: ['0x12'] },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 60, apiKeyId: 'not-a-uuid' },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 60, extra: true },
      { provider: 'erc4337', spendingLimitCents: '10', durationSecs: 60, planId: 999999 },
      {
        provider: 'erc4337',
        spendingLimitCents: '10',
        durationSecs: 60,
        apiKeyId: '00000000-0000-4000-8000-000000000000',
      },
      [],
    ];
    for (const body of bad) {
      const r = await u.api.post('/delegation/create', body);
      t.is(r.status, 400, JSON.stringify(body));
      t.is(r.body.code, 'BCK.HTTP.0400');
    }
  });

  test('only the owner sees, lists or revokes a delegation (others: 404)', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const { body } = await a.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 10,
      durationSecs: 60,
    });
    for (const r of [
      await b.api.get(`/delegation/${body.delegationId}`),
      await b.api.get(`/delegation/${body.delegationId}/transactions`),
      await b.api.del(`/delegation/${body.delegationId}`),
    ]) {
      t.is(r.status, 404);
      t.is(r.body.code, 'BCK.DELEGATION.0001');
    }
    const list = await b.api.get('/delegation');
    t.is(list.body.total, 0);
    t.is((await a.api.get(`/delegation/${body.delegationId}`)).body.status, 'Active');
  });

  test('a malformed delegation id is the 404 of an unknown id, naming the id that was sent', async (t) => {
    const a = await stack().user();
    const long = 'x'.repeat(500);
    for (const [id, shown] of [
      ['not-a-uuid', 'not-a-uuid'],
      ['x', 'x'],
      // Decoded from the path: control characters and non-ASCII are not repeated; a long id is cut.
      ['a%0Ab%C3%A9%3Cs%3E', 'a?b?<s>'],
      [long, `${'x'.repeat(61)}...`],
    ]) {
      for (const r of [
        await a.api.get(`/delegation/${id}`),
        await a.api.del(`/delegation/${id}`),
        await a.api.get(`/delegation/${id}/transactions`),
      ]) {
        t.is(r.status, 404, id);
        t.is(r.body.code, 'BCK.DELEGATION.0001');
        t.is(r.body.details, `delegation ${shown} not found`);
        t.deepEqual(JSON.parse(r.body.params), { delegationId: shown });
        t.false(r.text.includes('00000000-0000-0000-0000-000000000000'));
      }
    }
  });

  test('list: paging, newest first, accessible=true filters by the calling key and activity', async (t) => {
    const u = await stack().user();
    const other = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 1,
      durationSecs: 60,
    });
    t.is(other.status, 201);
    // Bound to another key of the same user: not accessible to u's key.
    const { createApiKey } = await import('../../shared/accounts/api-keys.js');
    const k2 = await createApiKey(stack().ctx, u.userId);
    const bound = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 2,
      durationSecs: 60,
      apiKeyId: k2.apiKeyId,
    });
    const revoked = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 3,
      durationSecs: 60,
    });
    await u.api.del(`/delegation/${revoked.body.delegationId}`);
    const all = await u.api.get('/delegation?page=1&offset=2');
    t.is(all.status, 200);
    t.is(all.body.total, 3);
    t.is(all.body.page, 1);
    t.is(all.body.offset, 2);
    t.is(all.body.delegations.length, 2);
    t.is(all.body.delegations[0].delegationId, revoked.body.delegationId);
    t.is(all.body.delegations[0].status, 'Revoked');
    t.is(all.body.delegations[1].apiKeyId, k2.apiKeyId);
    const page2 = await u.api.get('/delegation?page=2&offset=2');
    t.is(page2.body.delegations.length, 1);
    t.is(page2.body.delegations[0].delegationId, other.body.delegationId);
    const acc = await u.api.get('/delegation?accessible=true');
    t.deepEqual(
      acc.body.delegations.map((d: { delegationId: string }) => d.delegationId),
      [other.body.delegationId],
    );
    const { apiClient } = await import('../support/http.js');
    const acc2 = await apiClient(stack().baseUrl, k2.apiKey).get('/delegation?accessible=true');
    t.deepEqual(
      acc2.body.delegations.map((d: { delegationId: string }) => d.delegationId).sort(),
      [other.body.delegationId, bound.body.delegationId].sort(),
    );
    // Filters narrow together: a revoked delegation is never accessible, whatever status is asked for.
    const accRevoked = await u.api.get('/delegation?accessible=true&status=Revoked');
    t.is(accRevoked.status, 200, accRevoked.text);
    t.deepEqual(accRevoked.body.delegations, []);
    t.is(accRevoked.body.total, 0);
    const accActive = await u.api.get('/delegation?accessible=true&status=Active');
    t.deepEqual(
      accActive.body.delegations.map((d: { delegationId: string }) => d.delegationId),
      [other.body.delegationId],
    );
    const revokedOnly = await u.api.get('/delegation?status=Revoked');
    t.deepEqual(
      revokedOnly.body.delegations.map((d: { delegationId: string }) => d.delegationId),
      [revoked.body.delegationId],
    );
    t.is((await u.api.get('/delegation?page=0')).status, 400);
    t.is((await u.api.get('/delegation?offset=1000')).status, 400);
    t.is((await u.api.get('/delegation?accessible=maybe')).status, 400);
  });

  test('reserve and release: cap, recipients, plan, key, ledger rows, revocation and expiry', async (t) => {
    const u = await stack().user();
    const { body } = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 100,
      durationSecs: 60,
      allowedRecipients: [addr(1)],
    });
    const id: string = body.delegationId;
    const ctx = stack().ctx;
    const base = { delegationId: id, userId: u.userId };
    t.like(await reserve(ctx, { ...base, amountCents: 60n, recipient: addr(1), reference: 'p1' }), {
      type: 'reserved',
    });
    t.like(await reserve(ctx, { ...base, amountCents: 41n, recipient: addr(1) }), {
      type: 'refused',
      reason: 'delegation budget exceeded',
    });
    t.like(await reserve(ctx, { ...base, amountCents: 1n, recipient: addr(2) }), {
      type: 'refused',
      status: 'NotAllowed',
    });
    t.like(await reserve(ctx, { ...base, userId: 'someone-else', amountCents: 1n }), {
      type: 'refused',
      status: 'NotFound',
    });
    t.like(await reserve(ctx, { ...base, amountCents: 40n, recipient: addr(1) }), { type: 'reserved' });
    t.like(await reserve(ctx, { ...base, amountCents: 1n }), { type: 'refused', status: 'Exhausted' });
    t.is((await u.api.get(`/delegation/${id}`)).body.status, 'Exhausted');
    t.true(await release(ctx, { ...base, amountCents: 30n, reference: 'p1' }));
    t.false(await release(ctx, { ...base, amountCents: 1000n }));
    const rec = (await u.api.get(`/delegation/${id}`)).body;
    t.like(rec, { amountSpentCents: '70', remainingBudgetCents: '30', transactionCount: 2, status: 'Active' });
    const txs = await u.api.get(`/delegation/${id}/transactions`);
    t.is(txs.body.total, 3);
    t.deepEqual(
      txs.body.transactions.map((x: { kind: string }) => x.kind),
      ['release', 'reserve', 'reserve'],
    );
    const rows = await ctx.db.em().find(DelegationTransaction, { delegationId: id });
    t.is(
      rows.reduce((s, r) => s + r.amountCents, 0n),
      70n,
    );
    // Revocation stops the next spend.
    t.is((await u.api.del(`/delegation/${id}`)).body.status, 'Revoked');
    t.like(await reserve(ctx, { ...base, amountCents: 1n, recipient: addr(1) }), {
      type: 'refused',
      status: 'Revoked',
    });
    // Expiry stops spending too.
    const short = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 100,
      durationSecs: 1,
    });
    await new Promise((r) => setTimeout(r, 1200));
    t.like(await reserve(ctx, { delegationId: short.body.delegationId, userId: u.userId, amountCents: 1n }), {
      type: 'refused',
      status: 'Expired',
    });
    t.is((await u.api.get(`/delegation/${short.body.delegationId}`)).body.status, 'Expired');
    const d = await ctx.db.em().findOneOrFail(Delegation, { id: short.body.delegationId });
    t.is(d.amountSpentCents, 0n);
  });
});
