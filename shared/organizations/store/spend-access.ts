// The reads that decide whether a member may spend through an organization wallet, in SQL. They join
// `org_wallet_share`, `org_group`, `org_membership`, `org_group_member` (and `group_budget`), and read `org_wallet`'s
// address: tables whose other statements are the entity manager's (wallets.ts, groups.ts, members.ts). SQL here
// because the spend reads them inside its own transaction (a `SqlTx` of `ctx.db.sql`, which has no entity manager),
// locking the rows it read (PostgreSQL FOR SHARE) until the spend commits; the delegation's creation asks the same
// join outside a transaction. Nothing here writes.
import type { SqlTx } from '../../db/sql.js';

const MAY_SPEND = `select b.id as budget_id, g.org_id as org_id
  from org_wallet_share s
  join org_group g on g.id = s.group_id and g.active
  join org_membership m on m.org_id = g.org_id and m.user_id = ? and m.active
  join org_group_member gm on gm.group_id = g.id and gm.membership_id = m.id
  left join group_budget b on b.group_id = g.id and b.currency = ?
  where s.wallet_id = ? and s.group_id = ?`;

// FOR SHARE may not lock the nullable side of an outer join: the budget row is locked by its charge instead.
const LOCKED = { sqlite: MAY_SPEND, postgresql: `${MAY_SPEND} for share of s, g, m, gm` } as const;

/**
 * Whether the wallet is still shared with the active group and the user still an active member of it, with the
 * rows that say so locked until `tx` ends: undefined when not; else the group's organization and its budget in
 * `currency` (null when it has none).
 */
export async function lockSpendAccess(
  tx: SqlTx,
  a: { userId: string; walletId: string; groupId: string; currency: string },
): Promise<{ orgId: string; budgetId: string | null } | undefined> {
  const [row] = await tx.all(LOCKED[tx.dialect], [a.userId, a.currency, a.walletId, a.groupId]);
  if (row === undefined) return undefined;
  const budgetId = row.budget_id === null || row.budget_id === undefined ? null : String(row.budget_id);
  return { orgId: String(row.org_id), budgetId };
}

/** The address of the organization wallet, read on `tx`. */
export async function walletAddressIn(tx: SqlTx, walletId: string): Promise<string | undefined> {
  const [wallet] = await tx.all('select address from org_wallet where id = ?', [walletId]);
  return wallet === undefined ? undefined : String(wallet.address);
}

/** The user's active groups the wallet is shared with (the groups the user may spend it through). */
export async function spendableGroupIds(tx: SqlTx, userId: string, walletId: string): Promise<string[]> {
  const rows = await tx.all(
    `select s.group_id as group_id from org_wallet_share s
      join org_group g on g.id = s.group_id and g.active
      join org_membership m on m.org_id = g.org_id and m.user_id = ? and m.active
      join org_group_member gm on gm.group_id = g.id and gm.membership_id = m.id
      where s.wallet_id = ?`,
    [userId, walletId],
  );
  return rows.map((r) => String(r.group_id));
}
