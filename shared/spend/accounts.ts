// The capped accounts a spend charges. Each kind is one table with a spent amount, a limit and a state, charged
// by ONE conditional UPDATE of its own and journalled in an append-only ledger of its own. Two kinds exist: a
// user's spending delegation, and an organization's group budget (a per-currency cap whose period rolls), charged
// in the same spend as the member's delegation.
import type { SqlTx } from '../db/sql.js';

export interface DelegationAccount {
  readonly kind: 'delegation';
  readonly id: string;
  /** The owner: the charge matches only the owner's row, so a spend never crosses users. */
  readonly userId: string;
}

/** A group's budget in one currency (group_budget): a cap per period, the period rolled by the charge itself. */
export interface GroupBudgetAccount {
  readonly kind: 'groupBudget';
  readonly id: string;
  /** The organization: the charge matches only that organization's row, so a spend never crosses organizations. */
  readonly orgId: string;
}

export type CappedAccount = DelegationAccount | GroupBudgetAccount;

export const delegationAccount = (id: string, userId: string): DelegationAccount => ({
  kind: 'delegation',
  id,
  userId,
});

export const groupBudgetAccount = (id: string, orgId: string): GroupBudgetAccount => ({
  kind: 'groupBudget',
  id,
  orgId,
});

/** Why an account's conditional UPDATE matched no row. */
export type RefusalReason = 'not_found' | 'inactive' | 'revoked' | 'expired' | 'over_cap';

export interface RefusalCause {
  readonly reason: RefusalReason;
  /** What the account had left when it refused (over_cap), in cents. */
  readonly remainingCents?: bigint | undefined;
}

export interface JournalEntry {
  readonly kind: 'reserve' | 'release';
  /** Positive for a reserve, negative for a release: the journal's rows sum to the amount spent. */
  readonly amountCents: bigint;
  readonly reference: string | null;
  readonly description: string | null;
}

/** The SQL of one kind of capped account. Every method runs statements on the caller's transaction only. */
export interface AccountKind<A extends CappedAccount> {
  /**
   * Position in the one lock order of a spend: lower ranks are charged (and so locked) first, then ids in
   * ascending order within a rank. Two spends touching the same accounts then lock them in the same order and
   * cannot deadlock on PostgreSQL.
   */
  readonly lockRank: number;
  /** ONE conditional UPDATE drawing `cents` if the account may spend them now; true when it did. */
  charge(tx: SqlTx, account: A, cents: bigint, now: Date): Promise<boolean>;
  /**
   * ONE conditional UPDATE giving `cents` back, never more than was spent; true when it did. `reference` is the
   * release's, the same as its charge's: a kind whose spent amount restarts (a group budget's period) finds there
   * what the charge was counted in.
   */
  giveBack(tx: SqlTx, account: A, cents: bigint, reference: string | null): Promise<boolean>;
  /** Appends the ledger row of a charge or a release; resolves with its id. */
  journal(tx: SqlTx, account: A, entry: JournalEntry, now: Date): Promise<string>;
  /** Why `charge` matched no row, read in the same transaction right after it. */
  whyRefused(tx: SqlTx, account: A, cents: bigint, now: Date): Promise<RefusalCause>;
  /**
   * What the account records once a charge is journalled (a group budget's threshold and exhaustion alerts), in the
   * same transaction, while the charge's UPDATE still holds the account's row: it commits or rolls back with it.
   */
  afterCharge?(tx: SqlTx, account: A, now: Date): Promise<void>;
}
