// A user's bindings: the grants they gave connectors, with the cap and spending of each grant's delegation.
// Read and revoked only by their user (another user's binding is not found, 404).
import { raw } from '@mikro-orm/sql';
import { type ConsentType, Delegation, DelegationTransaction, OAuthClient, OAuthGrant } from '../db/entities/index.js';
import { timestamp } from '../db/sql.js';
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { revokeGrant } from './grants.js';

export type BindingState = 'active' | 'expired' | 'exhausted' | 'revoked';

export interface Binding {
  readonly bindingId: string;
  readonly clientId: string;
  readonly connectorName: string;
  readonly consentType: ConsentType;
  readonly delegationId: string;
  readonly spendingLimitCents: string;
  readonly amountSpentCents: string;
  readonly currency: string;
  readonly state: BindingState;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

const iso = (d: Date | null | undefined): string | null => (d == null ? null : d.toISOString());

/**
 * When each delegation was last charged: a grant's delegation is its own, so its journal's last charge is the
 * grant's last payment, whether a commerce payment through the router or an account_access order by card.
 */
async function lastChargedAt(ctx: ServiceContext, delegationIds: readonly string[]): Promise<Map<string, Date>> {
  if (delegationIds.length === 0) return new Map();
  const rows = await ctx.db
    .em()
    .createQueryBuilder(DelegationTransaction)
    .select([raw('delegation_id as d'), raw('max(created_at) as last')])
    .where({ delegationId: { $in: [...delegationIds] }, kind: 'reserve' })
    .groupBy('delegationId')
    .execute<{ d: string; last: unknown }[]>('all', false);
  return new Map(rows.map((r) => [r.d, timestamp(r.last)]));
}

export async function listBindings(
  ctx: ServiceContext,
  userId: string,
  q: { page: number; offset: number },
): Promise<{ bindings: Binding[]; total: number; page: number; offset: number }> {
  const em = ctx.db.em();
  const [grants, total] = await em.findAndCount(
    OAuthGrant,
    { userId },
    { orderBy: { createdAt: 'desc', id: 'asc' }, limit: q.offset, offset: (q.page - 1) * q.offset },
  );
  const delegations = new Map(
    (await em.find(Delegation, { id: { $in: grants.map((g) => g.delegationId) }, userId })).map((d) => [d.id, d]),
  );
  const clients = new Map(
    (await em.find(OAuthClient, { clientId: { $in: grants.map((g) => g.clientId) } })).map((c) => [c.clientId, c]),
  );
  const lastUsed = await lastChargedAt(
    ctx,
    grants.map((g) => g.delegationId),
  );
  const now = ctx.now().getTime();
  const bindings = grants.map((g): Binding => {
    const d = delegations.get(g.delegationId);
    const limit = d?.spendingLimitCents ?? 0n;
    const spent = d?.amountSpentCents ?? 0n;
    const state: BindingState =
      g.status === 'Revoked' || d === undefined || d.status === 'Revoked'
        ? 'revoked'
        : d.expiresAt.getTime() <= now
          ? 'expired'
          : spent >= limit
            ? 'exhausted'
            : 'active';
    return {
      bindingId: g.id,
      clientId: g.clientId,
      connectorName: clients.get(g.clientId)?.name ?? '',
      consentType: g.consentType,
      delegationId: g.delegationId,
      spendingLimitCents: toWire(limit),
      amountSpentCents: toWire(spent),
      currency: d?.currency ?? '',
      state,
      createdAt: g.createdAt.toISOString(),
      lastUsedAt: iso(lastUsed.get(g.delegationId)),
      revokedAt: iso(g.revokedAt ?? d?.revokedAt),
    };
  });
  return { bindings, total, page: q.page, offset: q.offset };
}

/** Revokes the user's binding, its tokens and its delegation; revoking a revoked binding is a no-op. */
export async function revokeBinding(ctx: ServiceContext, userId: string, bindingId: string): Promise<void> {
  const grant = await ctx.db.em().findOne(OAuthGrant, { id: bindingId, userId });
  if (grant === null) throw new AppError('BCK.OAUTH.0019', `binding ${bindingId} not found`);
  await revokeGrant(ctx, grant.id, 'user');
}
