// Which groups a wallet is shared with. An Admin shares and unshares; sharing twice is a conflict (409
// BCK.ORG.0008, like every other "already exists" of the organization), unsharing what is not shared is 404
// BCK.ORG.0020, and a deactivated group takes no new share (409 BCK.ORG.0010) though it can still lose one.
// Each change is one statement on the share's primary key, so concurrent shares and unshares of one pair
// serialize on that row and each answer says what it did.
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/orm.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type OrgCaller, adminOf, groupIn, memberOf } from './org-caller.js';
import { recordActivity } from '../org-activity/store.js';
import { memberGroupIds } from './member-groups.js';
import { type GroupRow, isActiveGroup } from './store/groups.js';
import {
  deleteWalletShare,
  groupIdsSharingWallet,
  insertWalletShare,
  walletIdsSharedWith,
  walletsOf,
} from './store/wallets.js';
import { type WalletRecord, walletIn, walletRecord } from './wallets.js';

const inactiveGroup = (groupId: string) =>
  new AppError('BCK.ORG.0010', { details: `group ${groupId} is deactivated: it takes no new shares` });

/** A group of the organization that may take a new share: active, else 409 BCK.ORG.0010. */
export async function activeGroupIn(em: Em, org: OrgCaller, groupId: string): Promise<GroupRow> {
  const g = await groupIn(em, org, groupId);
  if (!g.active) throw inactiveGroup(groupId);
  return g;
}

/**
 * Inside the share's transaction, after its insert: the group still active. The check before the transaction
 * answers the common case; this one closes the window in which the group was deactivated meanwhile (throwing
 * rolls the share back).
 */
export async function requireStillActive(tx: Em, orgId: string, groupId: string): Promise<void> {
  if (!(await isActiveGroup(tx, orgId, groupId))) throw inactiveGroup(groupId);
}

export async function shareWallet(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  walletId: string,
  groupId: string,
): Promise<void> {
  const org = await adminOf(ctx, userId, orgId);
  const em = ctx.db.em();
  await walletIn(em, org, walletId);
  await activeGroupIn(em, org, groupId);
  const now = ctx.now();
  await em.transactional(async (tx) => {
    // The insert first: on SQLite it takes the write lock at once (a read first would have to upgrade, and
    // fails with "database is locked" under concurrent writers); on PostgreSQL a concurrent insert of the same
    // pair waits on it. Zero rows inserted: the pair is shared already.
    if (!(await insertWalletShare(tx, { walletId, groupId, orgId: org.orgId, createdAt: now })))
      throw new AppError('BCK.ORG.0008', { details: `wallet ${walletId} is already shared with group ${groupId}` });
    await requireStillActive(tx, org.orgId, groupId);
    await recordActivity(
      emSql(tx),
      {
        orgId: org.orgId,
        eventType: 'wallet.shared',
        actorUserId: userId,
        subjectType: 'wallet',
        subjectId: walletId,
        details: { groupId },
      },
      now,
    );
  });
}

export async function unshareWallet(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  walletId: string,
  groupId: string,
): Promise<void> {
  const org = await adminOf(ctx, userId, orgId);
  const em = ctx.db.em();
  await walletIn(em, org, walletId);
  await groupIn(em, org, groupId);
  const now = ctx.now();
  await em.transactional(async (tx) => {
    // The delete first, for the same reason as the share's insert; zero rows: it was not shared.
    if ((await deleteWalletShare(tx, org.orgId, walletId, groupId)) !== 1)
      throw new AppError('BCK.ORG.0020', { details: `wallet ${walletId} is not shared with group ${groupId}` });
    await recordActivity(
      emSql(tx),
      {
        orgId: org.orgId,
        eventType: 'wallet.unshared',
        actorUserId: userId,
        subjectType: 'wallet',
        subjectId: walletId,
        details: { groupId },
      },
      now,
    );
  });
}

/** The groups a wallet is shared with, oldest share first; a Member sees only their own active groups among them. */
export async function walletGroupIds(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  walletId: string,
): Promise<string[]> {
  const org = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  await walletIn(em, org, walletId);
  const ids = await groupIdsSharingWallet(em, org.orgId, walletId);
  if (org.role === 'Admin') return ids;
  const mine = new Set(await memberGroupIds(em, org));
  return ids.filter((id) => mine.has(id));
}

/** The wallets shared with a group: any group for an Admin, one of their active groups for a Member (else 404). */
export async function groupWallets(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
): Promise<WalletRecord[]> {
  const org = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  await groupIn(em, org, groupId);
  if (org.role !== 'Admin' && !(await memberGroupIds(em, org)).includes(groupId)) {
    throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  }
  const ids = await walletIdsSharedWith(em, org.orgId, [groupId]);
  if (ids.length === 0) return [];
  return (await walletsOf(em, org.orgId, ids)).map(walletRecord);
}
