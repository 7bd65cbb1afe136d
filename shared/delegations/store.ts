// Every statement on the delegation tables outside the spend, in the entity manager's style: creating a delegation,
// reading it, listing it, revoking it (one, or those of revoked OAuth grants), and reading its ledger (a page, the
// last charge). What a delegation has spent (amount_spent_cents, transaction_count and the delegation_transaction
// rows) is written only by the spend module's SQL (shared/spend/delegation-account.ts), in the transaction of the
// charge.
import type { InferEntity, RequiredEntityData } from '@mikro-orm/core';
import { raw } from '@mikro-orm/sql';
import { sqlCondition } from '../db/conditions.js';
import { Delegation, DelegationTransaction } from '../db/entities/index.js';
import { type Em, timestamp } from '../db/sql.js';
import type { DelegationStatus } from './requests.js';

export type DelegationEntity = InferEntity<typeof Delegation>;

/** A new delegation's columns; its id and expiry are the caller's to answer with. */
export type NewDelegationRow = RequiredEntityData<DelegationEntity> & { id: string; expiresAt: Date };

/** Adds a new delegation to `em`'s unit of work; the caller flushes it with whatever it belongs to. */
export function addDelegation(em: Em, row: NewDelegationRow): void {
  em.create(Delegation, row);
}

/** Inserts a new delegation now, flushing `em`'s unit of work with it. */
export async function insertDelegation(em: Em, row: NewDelegationRow): Promise<void> {
  addDelegation(em, row);
  await em.flush();
}

/** The delegation `delegationId` of `userId`, or null (another user's is null too). */
export function findOwnDelegation(em: Em, userId: string, delegationId: string): Promise<DelegationEntity | null> {
  return em.findOne(Delegation, { id: delegationId, userId });
}

/** One page of the user's delegations, newest first, narrowed by `accessible` and `status` as of `now`. */
export async function delegationsPage(
  em: Em,
  caller: { userId: string; apiKeyId: string },
  q: { page: number; offset: number; accessible?: boolean | undefined; status?: DelegationStatus | undefined },
  now: Date,
): Promise<{ rows: DelegationEntity[]; total: number }> {
  // Every filter narrows: `accessible` AND `status` (a switch that assigned into one object let `status` replace
  // the accessible conditions, so accessible=true&status=Revoked listed revoked delegations).
  const conditions: Record<string, unknown>[] = [];
  const active = {
    status: 'Active',
    expiresAt: { $gt: now },
    ...sqlCondition('amount_spent_cents < spending_limit_cents'),
  };
  if (q.accessible === true) conditions.push(active, { $or: [{ apiKeyId: null }, { apiKeyId: caller.apiKeyId }] });
  switch (q.status) {
    case 'Active':
      conditions.push(active);
      break;
    case 'Revoked':
      conditions.push({ status: 'Revoked' });
      break;
    case 'Expired':
      conditions.push({ status: 'Active', expiresAt: { $lte: now } });
      break;
    case 'Exhausted':
      conditions.push({
        status: 'Active',
        expiresAt: { $gt: now },
        ...sqlCondition('amount_spent_cents >= spending_limit_cents'),
      });
      break;
    default:
  }
  const where = conditions.length === 0 ? { userId: caller.userId } : { userId: caller.userId, $and: conditions };
  const [rows, total] = await em.findAndCount(Delegation, where, {
    orderBy: { createdAt: 'desc', id: 'asc' },
    limit: q.offset,
    offset: (q.page - 1) * q.offset,
  });
  return { rows, total };
}

/** Revokes the user's delegation if it is still Active (a revoked one stays as it was). */
export async function revokeActive(em: Em, userId: string, delegationId: string, now: Date): Promise<void> {
  await em.nativeUpdate(
    Delegation,
    { id: delegationId, userId, status: 'Active' },
    { status: 'Revoked', revokedAt: now },
  );
}

/** One page of a delegation's ledger, newest first. */
export async function transactionsPage(
  em: Em,
  delegationId: string,
  q: { page: number; offset: number },
): Promise<{ rows: InferEntity<typeof DelegationTransaction>[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    DelegationTransaction,
    { delegationId },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.offset, offset: (q.page - 1) * q.offset },
  );
  return { rows, total };
}

/** The delegations named that are `userId`'s (another user's is left out), whatever their state. */
export const delegationsOfUser = (
  em: Em,
  userId: string,
  delegationIds: readonly string[],
): Promise<DelegationEntity[]> => em.find(Delegation, { id: { $in: [...delegationIds] }, userId });

/** The user's delegation while it can still be used at `now` (Active, not expired), or null. */
export const findUsableDelegation = (
  em: Em,
  userId: string,
  delegationId: string,
  now: Date,
): Promise<DelegationEntity | null> =>
  em.findOne(Delegation, { id: delegationId, userId, status: 'Active', expiresAt: { $gt: now } });

/** Revokes each delegation still Active, each with the user it belongs to (never another user's). */
export async function revokeActiveOfUsers(
  em: Em,
  delegations: readonly { readonly id: string; readonly userId: string }[],
  now: Date,
): Promise<void> {
  await em.nativeUpdate(
    Delegation,
    { $or: delegations.map((d) => ({ id: d.id, userId: d.userId })), status: 'Active' },
    { status: 'Revoked', revokedAt: now },
  );
}

/** When each delegation was last charged: the newest `reserve` of its ledger (none: left out). */
export async function lastReservedAt(em: Em, delegationIds: readonly string[]): Promise<Map<string, Date>> {
  if (delegationIds.length === 0) return new Map();
  const rows = await em
    .createQueryBuilder(DelegationTransaction)
    .select([raw('delegation_id as d'), raw('max(created_at) as last')])
    .where({ delegationId: { $in: [...delegationIds] }, kind: 'reserve' })
    .groupBy('delegationId')
    .execute<{ d: string; last: unknown }[]>('all', false);
  return new Map(rows.map((r) => [r.d, timestamp(r.last)]));
}
