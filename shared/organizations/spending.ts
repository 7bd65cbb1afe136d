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

const MAY_SPEND = `select b.id as budget_id, g.org_id as org_id
  from org_wallet_share s
  join org_group g on g.id = s.group_id and g.active
  join org_membership m on m.org_id = g.org_id and m.user_id = ? and m.active
  join org_group_member gm on gm.group_id = g.id and gm.membership_id = m.id
  left join group_budget b on b.group_id = g.id and b.currency = ?
  where s.wallet_id = ? and s.group_id = ?`;

// FOR SHARE may not lock the nullable side of an outer join: the budget row is locked by its charge instead.
const LOCKED = { sqlite: MAY_SPEND, postgresql: `${MAY_SPEND} for share of s, g, m, gm` } as const;

export interface OrgSpend {
  readonly walletId: string;
  readonly groupId: string;
  readonly userId: string;
  /** The delegation's currency: the group's budget in it is charged. */
  readonly currency: string;
}

/** The group budget the spend is charged to, or 402 BCK.ROUTER.0003 when the organization no longer allows it. */
export async function groupBudgetForSpendIn(tx: SqlTx, o: OrgSpend): Promise<GroupBudgetAccount> {
  const [row] = await tx.all(LOCKED[tx.dialect], [o.userId, o.currency, o.walletId, o.groupId]);
  if (row === undefined) {
    throw new AppError('BCK.ROUTER.0003', {
      details: `organization wallet ${o.walletId} is no longer available to this member through group ${o.groupId} (unshared, group deactivated, or member removed)`,
      params: { groupId: o.groupId },
    });
  }
  if (row.budget_id === null || row.budget_id === undefined) {
    throw new AppError('BCK.ROUTER.0003', {
      details: `group ${o.groupId} has no budget in ${o.currency}`,
      params: {
        groupId: o.groupId,
        currency: o.currency,
      },
    });
  }
  return groupBudgetAccount(String(row.budget_id), String(row.org_id));
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
  const [wallet] = await tx.all('select address from org_wallet where id = ?', [d.orgWalletId]);
  if (wallet === undefined) throw new InvariantError(`organization wallet ${d.orgWalletId} is shared but missing`);
  return { address: String(wallet.address), budget };
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
  const [row] = await tx.all(
    `select b.id as budget_id, b.org_id as org_id from delegation d
      join group_budget b on b.group_id = d.group_id and b.currency = d.currency
      where d.id = ? and d.org_wallet_id is not null`,
    [delegationId],
  );
  return row === undefined ? undefined : groupBudgetAccount(String(row.budget_id), String(row.org_id));
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
  const rows = await emSql(ctx.db.em()).all(
    `select s.group_id as group_id from org_wallet_share s
      join org_group g on g.id = s.group_id and g.active
      join org_membership m on m.org_id = g.org_id and m.user_id = ? and m.active
      join org_group_member gm on gm.group_id = g.id and gm.membership_id = m.id
      where s.wallet_id = ?`,
    [userId, walletId],
  );
  const groups = rows.map((r) => String(r.group_id));
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
