// A user's bindings (GET /oauth/bindings, POST /oauth/bindings/{id}/revoke): only their own, with the state
// derived from the grant and its delegation; a revocation ends the grant, its tokens and its delegation in one
// transaction. And the purge of what the flows leave behind.
import { sha256Hex } from '../../shared/crypto/hashing.js';
import {
  Delegation,
  OAuthCode,
  OAuthGrant,
  OAuthPageSession,
  OAuthRefreshToken,
} from '../../shared/db/entities/index.js';
import { purgeOAuth } from '../../shared/oauth/purge.js';
import { forEachDb } from '../support/matrix.js';
import { approve, authorizeBody, codeForm, connector, pkce, postForm, refreshForm } from '../support/oauth.js';

forEachDb(({ stack, test }) => {
  test('bindings: listed with their state, revoked by their user only, 404 for another user', async (t) => {
    const s = stack();
    const u = await s.user();
    const other = await s.user();
    const c = await connector(s);
    const p = await pkce();
    const first = await approve(s, u.apiKey, authorizeBody(c, p, { spending_limit_cents: 700 }));
    const second = await approve(s, u.apiKey, authorizeBody(c, p, { scope: 'account_access', currency: 'eur' }));
    t.is(first.status, 201);
    t.is(second.status, 201);
    const tokens = await postForm(s, '/oauth/token', codeForm(c, String(first.body.code), p.verifier));
    t.is(tokens.status, 200);

    const r = await fetch(`${s.proxyUrl}/oauth/bindings?page=1&offset=10`, {
      headers: { authorization: `Bearer ${u.apiKey}` },
    });
    t.is(r.status, 200);
    const body = (await r.json()) as {
      bindings: Record<string, unknown>[];
      total: number;
      page: number;
      offset: number;
    };
    t.is(body.total, 2);
    t.is(body.page, 1);
    t.is(body.offset, 10);
    const [newest, oldest] = body.bindings;
    t.like(newest, { consentType: 'account_access', currency: 'eur', spendingLimitCents: '5000', state: 'active' });
    t.like(oldest, {
      clientId: c.registration.clientId,
      connectorName: 'Test Connector',
      consentType: 'commerce',
      spendingLimitCents: '700',
      amountSpentCents: '0',
      currency: 'usd',
      state: 'active',
      lastUsedAt: null,
      revokedAt: null,
      revokedReason: null,
    });
    t.deepEqual(Object.keys(oldest ?? {}).sort(), [
      'amountSpentCents',
      'bindingId',
      'clientId',
      'connectorName',
      'consentType',
      'createdAt',
      'currency',
      'delegationId',
      'lastUsedAt',
      'revokedAt',
      'revokedReason',
      'spendingLimitCents',
      'state',
    ]);
    const bindingId = String(oldest?.bindingId);

    // Another user sees none of them and cannot revoke them.
    const theirs = await fetch(`${s.proxyUrl}/oauth/bindings`, {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    t.is(((await theirs.json()) as { total: number }).total, 0);
    const foreign = await fetch(`${s.proxyUrl}/oauth/bindings/${bindingId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    t.is(foreign.status, 404);
    t.is(((await foreign.json()) as { code: string }).code, 'BCK.OAUTH.0019');
    t.is((await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: bindingId })).status, 'Active');

    const revoke = () =>
      fetch(`${s.proxyUrl}/oauth/bindings/${bindingId}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.apiKey}` },
      });
    t.is((await revoke()).status, 204);
    t.is((await revoke()).status, 204); // idempotent
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: bindingId });
    t.like(grant, { status: 'Revoked', revokedReason: 'user' });
    t.is((await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).status, 'Revoked');
    const refresh = await s.ctx.db.em().findOneOrFail(OAuthRefreshToken, { grantId: bindingId });
    t.truthy(refresh.revokedAt);
    const after = await postForm(s, '/oauth/token', refreshForm(c, String(tokens.body.refresh_token)));
    t.is(after.body.error, 'invalid_grant');
    const relisted = await fetch(`${s.proxyUrl}/oauth/bindings`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    const states = (
      (await relisted.json()) as {
        bindings: { bindingId: string; state: string; revokedAt: string | null; revokedReason: string | null }[];
      }
    ).bindings;
    const revokedOne = states.find((b) => b.bindingId === bindingId);
    t.is(revokedOne?.state, 'revoked');
    t.is(revokedOne?.revokedReason, 'user');
    t.truthy(revokedOne?.revokedAt);

    // A binding whose delegation expired, was spent or was revoked (by itself) reads so.
    const fourth = await approve(s, u.apiKey, authorizeBody(c, p));
    const row4 = await s.ctx.db.em().findOneOrFail(OAuthCode, { codeHash: sha256Hex(String(fourth.body.code)) });
    const g4 = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: row4.grantId });
    const revokedAt = new Date(Date.now() - 1000);
    await s.ctx.db.em().nativeUpdate(Delegation, { id: g4.delegationId }, { status: 'Revoked', revokedAt });
    const third = await approve(s, u.apiKey, authorizeBody(c, p));
    const row = await s.ctx.db.em().findOneOrFail(OAuthCode, { codeHash: sha256Hex(String(third.body.code)) });
    const g3 = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: row.grantId });
    await s.ctx.db.em().nativeUpdate(Delegation, { id: g3.delegationId }, { amountSpentCents: 5000n });
    const secondGrant = (body.bindings[0]?.bindingId as string) ?? '';
    const g2 = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: secondGrant });
    await s.ctx.db.em().nativeUpdate(Delegation, { id: g2.delegationId }, { expiresAt: new Date(Date.now() - 1000) });
    const last = await fetch(`${s.proxyUrl}/oauth/bindings`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    const byId = new Map(
      (
        (await last.json()) as {
          bindings: { bindingId: string; state: string; revokedAt: string | null; revokedReason: string | null }[];
        }
      ).bindings.map((b) => [b.bindingId, [b.state, b.revokedReason, b.revokedAt]]),
    );
    t.deepEqual(byId.get(g3.id), ['exhausted', null, null]);
    t.deepEqual(byId.get(g2.id), ['expired', null, null]);
    t.deepEqual(byId.get(g4.id), ['revoked', 'delegation_revoked', revokedAt.toISOString()]);
    // Paging: bad values are 400 in the envelope.
    const bad = await fetch(`${s.proxyUrl}/oauth/bindings?offset=1000`, {
      headers: { authorization: `Bearer ${u.apiKey}` },
    });
    t.is(bad.status, 400);
  });

  test('the purge deletes codes and tokens a day past expiry and idle sessions, never a grant', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const { body } = await approve(s, u.apiKey, authorizeBody(c, await pkce()));
    const codeHash = sha256Hex(String(body.code));
    const em = s.ctx.db.em();
    const now = new Date();
    em.create(OAuthPageSession, {
      sessionHash: sha256Hex(`idle-${codeHash}`),
      userId: u.userId,
      lastSeenAt: new Date(now.getTime() - 3_600_000),
      expiresAt: new Date(now.getTime() + 3_600_000),
      createdAt: new Date(now.getTime() - 3_600_000),
    });
    em.create(OAuthPageSession, {
      sessionHash: sha256Hex(`fresh-${codeHash}`),
      userId: u.userId,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      createdAt: now,
    });
    await em.flush();
    // Expired a minute ago: kept (the grace day). Then two days ago: purged.
    await em.nativeUpdate(OAuthCode, { codeHash }, { expiresAt: new Date(now.getTime() - 60_000) });
    await purgeOAuth(s.ctx, now);
    t.truthy(await s.ctx.db.em().findOne(OAuthCode, { codeHash }));
    await em.nativeUpdate(OAuthCode, { codeHash }, { expiresAt: new Date(now.getTime() - 2 * 86_400_000) });
    await purgeOAuth(s.ctx, now);
    t.is(await s.ctx.db.em().findOne(OAuthCode, { codeHash }), null);
    t.is(await s.ctx.db.em().findOne(OAuthPageSession, { sessionHash: sha256Hex(`idle-${codeHash}`) }), null);
    t.truthy(await s.ctx.db.em().findOne(OAuthPageSession, { sessionHash: sha256Hex(`fresh-${codeHash}`) }));
    t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 1);
  });
});
