// A user's bindings: the grants they gave connectors, with the cap and spending of each grant's delegation.
// Read and revoked only by their user (another user's binding is not found, 404). A revoked binding says why.
import { type ConsentType, GRANT_REVOKE_REASONS } from '../db/entities/index.js';
import type { ServiceContext } from '../context.js';
import { type DelegationEntity, delegationsOfUser, lastReservedAt } from '../delegations/store.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { revokeGrant } from './grants.js';
import { type ClientRow, clientsByIds } from './store/clients.js';
import { type GrantRow, findUserGrant, userGrantsPage } from './store/grants.js';

export type BindingState = 'active' | 'expired' | 'exhausted' | 'revoked';

/**
 * Why a binding is revoked: the grant's own reason (`user`: its user revoked it; `revocation_endpoint`: the
 * connector revoked a token of it; `code_replay`, `refresh_reuse`, `device_replay`: a credential of it was used twice,
 * a sign it leaked; `client_disabled`: the operator disabled the connector), or `delegation_revoked` when the user
 * revoked the grant's delegation itself (DELETE /delegation/{id}).
 */
export const BINDING_REVOKE_REASONS = [...GRANT_REVOKE_REASONS, 'delegation_revoked'] as const;
export type BindingRevokeReason = (typeof BINDING_REVOKE_REASONS)[number];

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
  /** Null unless `state` is `revoked` (and for a revocation whose reason was not recorded). */
  readonly revokedReason: BindingRevokeReason | null;
}

const iso = (d: Date | null | undefined): string | null => (d == null ? null : d.toISOString());

type GrantOf = Pick<GrantRow, 'status' | 'revokedAt' | 'revokedReason'>;
type DelegationOf = Pick<DelegationEntity, 'status' | 'revokedAt'>;
type ClientOf = Pick<ClientRow, 'disabledAt'>;

/**
 * Whether a binding is revoked, when and why; undefined while it is not. The grant's own revocation comes first;
 * a grant still Active is revoked all the same when its delegation was revoked (or is gone), or when its client is
 * disabled (a grant approved while the client was being disabled: no token of it is accepted, see liveGrant).
 */
function revocationOf(
  g: GrantOf,
  d: DelegationOf | undefined,
  client: ClientOf | undefined,
): { at: Date | null | undefined; reason: BindingRevokeReason | null } | undefined {
  // A null reason: revoked by a version that did not record it (a migration's down() can leave that).
  if (g.status === 'Revoked') return { at: g.revokedAt ?? d?.revokedAt, reason: g.revokedReason ?? null };
  if (d === undefined || d.status === 'Revoked') return { at: d?.revokedAt, reason: 'delegation_revoked' };
  if (client === undefined || client.disabledAt != null) return { at: client?.disabledAt, reason: 'client_disabled' };
  return undefined;
}

export async function listBindings(
  ctx: ServiceContext,
  userId: string,
  q: { page: number; offset: number },
): Promise<{ bindings: Binding[]; total: number; page: number; offset: number }> {
  const em = ctx.db.em();
  const { rows: grants, total } = await userGrantsPage(em, userId, q);
  const delegationIds = grants.map((g) => g.delegationId);
  const delegations = new Map((await delegationsOfUser(em, userId, delegationIds)).map((d) => [d.id, d]));
  const clientIds = grants.map((g) => g.clientId);
  const clients = new Map((await clientsByIds(em, clientIds)).map((c) => [c.clientId, c]));
  // A grant's delegation is its own, so its journal's last charge is the grant's last payment, whether a commerce
  // payment through the router or an account_access order by card.
  const lastUsed = await lastReservedAt(ctx.db.em(), delegationIds);
  const now = ctx.now().getTime();
  const bindings = grants.map((g): Binding => {
    const d = delegations.get(g.delegationId);
    const client = clients.get(g.clientId);
    const limit = d?.spendingLimitCents ?? 0n;
    const spent = d?.amountSpentCents ?? 0n;
    const revoked = revocationOf(g, d, client);
    const state: BindingState =
      revoked !== undefined
        ? 'revoked'
        : (d?.expiresAt.getTime() ?? 0) <= now
          ? 'expired'
          : spent >= limit
            ? 'exhausted'
            : 'active';
    return {
      bindingId: g.id,
      clientId: g.clientId,
      connectorName: client?.name ?? '',
      consentType: g.consentType,
      delegationId: g.delegationId,
      spendingLimitCents: toWire(limit),
      amountSpentCents: toWire(spent),
      currency: d?.currency ?? '',
      state,
      createdAt: g.createdAt.toISOString(),
      lastUsedAt: iso(lastUsed.get(g.delegationId)),
      revokedAt: iso(revoked?.at),
      revokedReason: revoked?.reason ?? null,
    };
  });
  return { bindings, total, page: q.page, offset: q.offset };
}

/** Revokes the user's binding, its tokens and its delegation; revoking a revoked binding is a no-op. */
export async function revokeBinding(ctx: ServiceContext, userId: string, bindingId: string): Promise<void> {
  const grant = await findUserGrant(ctx.db.em(), userId, bindingId);
  if (grant === null) throw new AppError('BCK.OAUTH.0019', { details: `binding ${bindingId} not found` });
  await revokeGrant(ctx, grant.id, 'user');
}
