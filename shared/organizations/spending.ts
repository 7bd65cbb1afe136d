// A spend through an organization wallet, checked inside the spend's own transaction: the wallet is still shared
// with the delegation's group, the group is active, and the spender is still an active member of it. The rows that
// say so are locked (PostgreSQL FOR SHARE) until the spend commits, so an unshare, a deactivation or a removal that
// runs meanwhile waits for it, and one that committed first is seen: once the unshare has returned, nothing more is
// charged to the group. On SQLite the spend's transaction began with a write and holds the database's one write
// lock, which orders it the same way.
import type { ServiceContext } from '../context.js';
import { type SqlTx, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type GroupBudgetAccount, groupBudgetAccount } from '../spend/index.js';
import { InvariantError } from '../errors/invariant.js';
import { budgetOfDelegation } from './store/group-budgets.js';
import { lockSpendAccess, spendableGroupIds, walletAddressIn } from './store/spend-access.js';

export interface OrgSpend {
  readonly walletId: string;
  readonly groupId: string;
  readonly userId: string;
  /** The delegation's currency: the group's budget in it is charged. */
  readonly currency: string;
}

/** The group budget the spend is charged to, or 402 BCK.ROUTER.0003 when the organization no longer allows it. */
export async function groupBudgetForSpendIn(tx: SqlTx, o: OrgSpend): Promise<GroupBudgetAccount> {
  const access = await lockSpendAccess(tx, o);
  if (access === undefined) {
    throw new AppError('BCK.ROUTER.0003', {
      details: `organization wallet ${o.walletId} is no longer available to this member through group ${o.groupId} (unshared, group deactivated, or member removed)`,
      params: { groupId: o.groupId },
    });
  }
  if (access.budgetId === null) {
    throw new AppError('BCK.ROUTER.0003', {
      details: `group ${o.groupId} has no budget in ${o.currency}`,
      params: {
        groupId: o.groupId,
        currency: o.currency,
      },
    });
  }
  return groupBudgetAccount(access.budgetId, access.orgId);
}

/** A delegation that pays from an organization wallet, as the order paths read it. */
export interface OrgDelegation {
  readonly orgWalletId: string;
  readonly groupId: string;
  readonly currency: string;
}

/**
 * A plan order paid from an organization wallet: the wallet's address (the paying wallet; the credits still go to
 * the member) and the group budget the order is charged to, checked and locked as any spend through the wallet.
 */
export async function orgOrderPayerIn(
  tx: SqlTx,
  d: OrgDelegation,
  userId: string,
): Promise<{ address: string; budget: GroupBudgetAccount }> {
  const budget = await groupBudgetForSpendIn(tx, {
    walletId: d.orgWalletId,
    groupId: d.groupId,
    userId,
    currency: d.currency,
  });
  const address = await walletAddressIn(tx, d.orgWalletId);
  if (address === undefined) throw new InvariantError(`organization wallet ${d.orgWalletId} is shared but missing`);
  return { address, budget };
}

/**
 * The group budget a delegation's spends are charged to (its group's, in its currency), or undefined for a
 * delegation that pays from its user's own wallet. A group has one budget per currency, and a spend through an
 * organization wallet is refused without one, so this is the budget every such spend charged.
 */
export async function groupBudgetOfDelegationIn(
  tx: SqlTx,
  delegationId: string,
): Promise<GroupBudgetAccount | undefined> {
  const b = await budgetOfDelegation(tx, delegationId);
  return b === undefined ? undefined : groupBudgetAccount(b.budgetId, b.orgId);
}

/**
 * Where a new delegation's spends will come from: `walletId`, through `groupId` or, when not given, the one group
 * of the caller's the wallet is shared with. The wallet must be shared with that active group and the caller an
 * active member of it; a wallet the caller cannot reach is not found (404 BCK.ORG.0005), as a Member reading it.
 */
export async function orgFundingFor(
  ctx: ServiceContext,
  userId: string,
  walletId: string,
  groupId: string | undefined,
): Promise<{ orgWalletId: string; groupId: string }> {
  const groups = await spendableGroupIds(emSql(ctx.db.em()), userId, walletId);
  if (groups.length === 0) throw new AppError('BCK.ORG.0005', { details: `wallet ${walletId} not found` });
  if (groupId !== undefined) {
    if (!groups.includes(groupId)) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
    return { orgWalletId: walletId, groupId };
  }
  const [only, ...more] = groups;
  if (only === undefined || more.length > 0) {
    throw new AppError('BCK.HTTP.0400', {
      details: 'body.groupId: the wallet is shared with several of your groups; name one',
      params: {
        issues: ['body.groupId: required'],
      },
    });
  }
  return { orgWalletId: walletId, groupId: only };
}
