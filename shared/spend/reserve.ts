// The one way to charge and to give back capped accounts. A spend is a list of charges, each against one
// account; `reserveIn` takes them in the one lock order, inside the caller's transaction, each as ONE conditional
// UPDATE whose affected-row count decides plus an append-only ledger row. Nothing is read first and nothing is
// kept in process memory: the database decides, so any number of processes on one PostgreSQL stay exact. On the
// router's issuance a spend of one delegation runs two statements (the UPDATE and the journal INSERT).
import type { SqlTx } from '../db/sql.js';
import type { AccountKind, CappedAccount } from './accounts.js';
import { delegationKind } from './delegation-account.js';
import { groupBudgetKind } from './group-budget-account.js';
import { SpendRefused } from './refusal.js';

export interface Charge {
  readonly account: CappedAccount;
  /** Cents, positive. */
  readonly amountCents: bigint;
}

export interface Spend {
  readonly charges: readonly Charge[];
  /** What the spend pays for (a payment id, an order id), kept on every ledger row. */
  readonly reference?: string | null | undefined;
  readonly description?: string | null | undefined;
}

export interface Reservation {
  /** One ledger row per charge, in lock order. */
  readonly entries: readonly { readonly account: CappedAccount; readonly ledgerId: string }[];
}

/**
 * Runs `visit` with the account's kind (its SQL): one case per kind, so a kind added to CappedAccount and not
 * handled here does not compile.
 */
function onKind<R>(account: CappedAccount, visit: <A extends CappedAccount>(kind: AccountKind<A>, account: A) => R): R {
  switch (account.kind) {
    case 'delegation':
      return visit(delegationKind, account);
    case 'groupBudget':
      return visit(groupBudgetKind, account);
  }
}

const lockRankOf = (account: CappedAccount): number => onKind(account, (kind) => kind.lockRank);

/** The one lock order: lock rank, then id. */
function byLockOrder(x: Charge, y: Charge): number {
  const rx = lockRankOf(x.account);
  const ry = lockRankOf(y.account);
  if (rx !== ry) return rx - ry;
  return x.account.id < y.account.id ? -1 : x.account.id > y.account.id ? 1 : 0;
}

/** The charges in lock order; every amount must be positive (a zero or negative charge is a caller's bug). */
function inLockOrder(charges: readonly Charge[]): readonly Charge[] {
  for (const c of charges) if (c.amountCents <= 0n) throw new RangeError('a charge must be a positive number of cents');
  return charges.length > 1 ? [...charges].sort(byLockOrder) : charges;
}

/**
 * Charges every account of the spend, or throws SpendRefused naming the first that refused (inactive, revoked,
 * expired, over its cap). The caller's transaction must then roll back: the charges before the refusal are
 * applied in it.
 */
export async function reserveIn(tx: SqlTx, spend: Spend, now: Date): Promise<Reservation> {
  const entries: { account: CappedAccount; ledgerId: string }[] = [];
  const reference = spend.reference ?? null;
  const description = spend.description ?? null;
  for (const { account, amountCents } of inLockOrder(spend.charges)) {
    const ledgerId = await onKind(account, async (kind, a) => {
      if (!(await kind.charge(tx, a, amountCents, now)))
        throw new SpendRefused(a, await kind.whyRefused(tx, a, amountCents, now));
      const id = await kind.journal(tx, a, { kind: 'reserve', amountCents, reference, description }, now);
      await kind.afterCharge?.(tx, a, now);
      return id;
    });
    entries.push({ account, ledgerId });
  }
  return { entries };
}

/**
 * Gives the charges back (a fee leg not earned, an order that could not be paid), in the same lock order, each
 * never below zero spent. Resolves true when every charge was given back. A release does not look at the
 * account's state: a revoked or expired delegation still gets back what it was charged for nothing. A group budget
 * is given back only into the period its charge was counted in, found by the release's `reference` (the charge's):
 * after its period rolled, the release gives that budget nothing (false) and journals nothing.
 */
export async function releaseIn(tx: SqlTx, release: Spend, now: Date): Promise<boolean> {
  const reference = release.reference ?? null;
  const description = release.description ?? null;
  let all = true;
  for (const { account, amountCents } of inLockOrder(release.charges)) {
    const released = await onKind(account, async (kind, a) => {
      if (!(await kind.giveBack(tx, a, amountCents, reference))) return false;
      await kind.journal(tx, a, { kind: 'release', amountCents: -amountCents, reference, description }, now);
      return true;
    });
    all &&= released;
  }
  return all;
}
