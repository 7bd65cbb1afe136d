// Every statement on `org_wallet` and `org_wallet_share` (which groups a wallet is shared with), in the entity
// manager's style (as most of them were). A new wallet goes into the caller's unit of work and is flushed with its
// transaction; a share's insert and delete run at once, as the first statement of the caller's transaction. The
// spend's locked access check reads these tables in SQL inside the spend's own transaction (spend-access.ts).
import type { InferEntity } from '@mikro-orm/core';
import { OrgWallet, OrgWalletShare } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { insertIfAbsent } from './insert-if-absent.js';

export type WalletRow = InferEntity<typeof OrgWallet>;

const OLDEST_FIRST = { orderBy: { createdAt: 'asc', id: 'asc' } } as const;

/** Adds a wallet to `em`'s unit of work; the caller's transaction flushes it. */
export function addWallet(
  em: Em,
  row: { id: string; orgId: string; label: string; address: string; walletKeyEnc: string; createdAt: Date },
): void {
  em.create(OrgWallet, row);
}

export const walletById = (em: Em, orgId: string, walletId: string): Promise<WalletRow | null> =>
  em.findOne(OrgWallet, { id: walletId, orgId });

/** The wallet `walletId` of whichever organization (for signing: the caller authorized already). */
export const anyOrgWallet = (em: Em, walletId: string): Promise<WalletRow | null> =>
  em.findOne(OrgWallet, { id: walletId });

/** The sealed key of the organization wallet at `address`, if any. */
export const walletKeyAt = (em: Em, address: string) =>
  em.findOne(OrgWallet, { address }, { fields: ['walletKeyEnc'] });

/** The organization's wallets (only those among `ids` when given), oldest first. */
export const walletsOf = (em: Em, orgId: string, ids?: readonly string[]): Promise<WalletRow[]> =>
  em.find(OrgWallet, ids === undefined ? { orgId } : { orgId, id: { $in: [...ids] } }, OLDEST_FIRST);

/** Whether the wallet is shared with any of `groupIds`. */
export async function isWalletSharedWith(
  em: Em,
  orgId: string,
  walletId: string,
  groupIds: readonly string[],
): Promise<boolean> {
  return (await em.count(OrgWalletShare, { walletId, orgId, groupId: { $in: [...groupIds] } })) > 0;
}

/** The ids of the wallets shared with any of `groupIds`, each once. */
export async function walletIdsSharedWith(em: Em, orgId: string, groupIds: readonly string[]): Promise<string[]> {
  const shares = await em.find(OrgWalletShare, { orgId, groupId: { $in: [...groupIds] } });
  return [...new Set(shares.map((s) => s.walletId))];
}

/** The ids of the groups the wallet is shared with, oldest share first. */
export async function groupIdsSharingWallet(em: Em, orgId: string, walletId: string): Promise<string[]> {
  const shares = await em.find(OrgWalletShare, { walletId, orgId }, { orderBy: { createdAt: 'asc', groupId: 'asc' } });
  return shares.map((s) => s.groupId);
}

/**
 * Inserts the share at once unless the pair is shared already; whether it inserted. On PostgreSQL a concurrent
 * insert of the same pair waits on this one.
 */
export const insertWalletShare = (
  tx: Em,
  row: { walletId: string; groupId: string; orgId: string; createdAt: Date },
): Promise<boolean> => insertIfAbsent(tx, OrgWalletShare, row, ['walletId', 'groupId']);

/** Deletes the share at once; the number of rows deleted (0: it was not shared). */
export const deleteWalletShare = (tx: Em, orgId: string, walletId: string, groupId: string): Promise<number> =>
  tx.nativeDelete(OrgWalletShare, { walletId, groupId, orgId });
