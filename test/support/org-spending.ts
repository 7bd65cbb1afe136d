// Fixtures of the organization-wallet spending tests: an organization whose Admin shares a funded wallet with a
// group of members (built in the database, orgs.ts), a budget created through the Admin's endpoint, each member's
// delegation naming the wallet, and readers of the group budget's row and journal.
import pg from 'pg';
import { GroupBudget, GroupBudgetTransaction, RouterPayment } from '../../shared/db/entities/index.js';
import type { StubChain } from './merchants/chain.js';
import { makeGroup, makeMember, makeOrg, makeWallet } from './orgs.js';
import { USDC, type User, fund } from './router-fixtures.js';
import type { Stack } from './stack.js';

export interface OrgMember {
  readonly user: User;
  readonly membershipId: string;
}

export interface OrgSpendingWorld {
  readonly admin: User;
  readonly orgId: string;
  readonly groupId: string;
  readonly walletId: string;
  /** The organization wallet's address (checksummed). */
  readonly address: string;
  readonly members: readonly OrgMember[];
}

/**
 * An organization: its Admin, `members` Members in one group, and a wallet shared with that group, funded with
 * `funds` USDC in the ledger and on `chain` (the merchants verify against it) as a user's wallet is.
 */
export async function orgSpendingWorld(
  stack: Stack,
  chain: StubChain | undefined,
  o: { members?: number; funds?: bigint; asset?: typeof USDC } = {},
): Promise<OrgSpendingWorld> {
  const admin = await stack.user();
  const { orgId } = await makeOrg(stack, admin.userId);
  const members: OrgMember[] = [];
  for (let i = 0; i < (o.members ?? 1); i += 1) {
    const user = await stack.user();
    members.push({ user, membershipId: await makeMember(stack, orgId, user.userId) });
  }
  const groupId = await makeGroup(
    stack,
    orgId,
    members.map((m) => m.membershipId),
  );
  const { walletId, address } = await makeWallet(stack, orgId, 'Team wallet', [groupId]);
  if ((o.funds ?? 0n) > 0n) await fund(stack, chain, { walletAddress: address }, o.funds ?? 0n, o.asset ?? USDC);
  return { admin, orgId, groupId, walletId, address, members };
}

/** A group budget created by the Admin (POST .../budgets); `one_shot` by default, so no period rolls mid-test. */
export async function createGroupBudget(
  admin: User,
  orgId: string,
  groupId: string,
  spendingLimitCents: number | bigint,
  o: { currency?: string; interval?: 'month' | 'year' | 'one_shot' } = {},
): Promise<string> {
  const r = await admin.api.post(`/organizations/${orgId}/groups/${groupId}/budgets`, {
    spendingLimitCents: String(spendingLimitCents),
    currency: o.currency ?? 'usd',
    interval: o.interval ?? 'one_shot',
  });
  if (r.status !== 201) throw new Error(`budget create: ${r.status} ${r.text}`);
  return r.body.budget.budgetId as string;
}

/** A member's erc4337 delegation paying from the organization wallet (201 expected). */
export async function createOrgDelegation(
  member: User,
  walletId: string,
  spendingLimitCents: number | string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await member.api.post('/delegation/create', {
    provider: 'erc4337',
    spendingLimitCents,
    durationSecs: 3600,
    organizationWalletId: walletId,
    ...extra,
  });
  if (r.status !== 201) throw new Error(`delegation/create (org wallet): ${r.status} ${r.text}`);
  return r.body.delegationId as string;
}

/** The group budget's row as stored now (a fresh EntityManager: no identity map answers). */
export async function groupBudgetRow(stack: Stack, budgetId: string) {
  return stack.ctx.db.em().findOneOrFail(GroupBudget, { id: budgetId });
}

/** The group budget's journal, oldest first. */
export async function groupBudgetJournal(stack: Stack, budgetId: string) {
  return stack.ctx.db.em().find(GroupBudgetTransaction, { budgetId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

/** The router payments made through any of these delegations. */
export async function paymentsOfDelegations(stack: Stack, delegationIds: readonly string[]) {
  return stack.ctx.db
    .em()
    .find(RouterPayment, { delegationId: { $in: [...delegationIds] } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

/**
 * PostgreSQL only: holds a delegation's row FOR UPDATE from a connection of the test's own, so a spend through it
 * stops at its delegation charge: after its issuance transaction checked (and locked) the share, the group and the
 * membership and charged the group budget, before it commits. Nothing else of a payment touches that row (a fee
 * leg that settles moves balances only), so the rest of a burst is held only behind that spend. The probes read
 * pg_stat_activity and pg_locks: a test waits on what the database reports, never on time.
 */
export async function holdDelegationRow(stack: Stack, delegationId: string) {
  if (stack.kind !== 'postgresql') throw new Error('holdDelegationRow: PostgreSQL only');
  const client = new pg.Client({ connectionString: stack.db.url });
  await client.connect();
  await client.query('begin');
  const held = await client.query('select id from delegation where id = $1 for update', [delegationId]);
  if (held.rowCount !== 1) {
    await client.query('rollback').finally(() => client.end());
    throw new Error(`holdDelegationRow: no delegation ${delegationId}`);
  }
  // The probes on a connection of their own: inside the holding transaction pg_stat_activity would answer from the
  // snapshot its first read took.
  const probe = new pg.Client({ connectionString: stack.db.url });
  await probe.connect();
  let open = true;
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await probe.query<{ n: string }>(sql, params)).rows[0]?.n ?? 0);
  return {
    /**
     * Whether a spend that charged a group budget (its transaction wrote a budget journal row, as only a spend or a
     * release does) waits on a lock now: past its share check, not committed.
     */
    budgetSpendWaiting: async () =>
      (await count(
        `select count(*) as n from pg_stat_activity a
          where a.datname = current_database() and a.wait_event_type = 'Lock'
            and exists (select 1 from pg_locks l join pg_class c on c.oid = l.relation
              where l.pid = a.pid and l.granted and c.relname = 'group_budget_transaction'
                and l.mode = 'RowExclusiveLock')`,
      )) > 0,
    /** Whether a statement whose text matches `pattern` (ILIKE) waits on a lock now. */
    statementWaiting: async (pattern: string) =>
      (await count(
        `select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike $1`,
        [pattern],
      )) > 0,
    async release(): Promise<void> {
      if (!open) return;
      open = false;
      await client.query('rollback').finally(() => Promise.all([client.end(), probe.end()]));
    },
  };
}
