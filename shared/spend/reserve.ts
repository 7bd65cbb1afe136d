// The one way to charge and to give back capped accounts. A spend is a list of charges, each against one
// account; `reserveIn` takes them in the one lock order, inside the caller's transaction, each as ONE conditional
// UPDATE whose affected-row count decides plus an append-only ledger row. Nothing is read first and nothing is
// kept in process memory: the database decides, so any number of processes on one PostgreSQL stay exact. On the
// router's issuance a spend of one delegation runs two statements (the UPDATE and the journal INSERT).
import type { SqlTx } from '../db/sql.js';
import type { AccountKind, CappedAccount, JournalEntry, RefusalCause } from './accounts.js';
import { delegationKind } from './delegation-account.js';
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

/** An account with its kind's SQL bound to it. */
interface Bound {
  readonly lockRank: number;
  readonly id: string;
  charge(tx: SqlTx, cents: bigint, now: Date): Promise<boolean>;
  giveBack(tx: SqlTx, cents: bigint): Promise<boolean>;
  journal(tx: SqlTx, entry: JournalEntry, now: Date): Promise<string>;
  whyRefused(tx: SqlTx, cents: bigint, now: Date): Promise<RefusalCause>;
}

function bindKind<A extends CappedAccount>(kind: AccountKind<A>, account: A): Bound {
  return {
    lockRank: kind.lockRank,
    id: account.id,
    charge: (tx, cents, now) => kind.charge(tx, account, cents, now),
    giveBack: (tx, cents) => kind.giveBack(tx, account, cents),
    journal: (tx, entry, now) => kind.journal(tx, account, entry, now),
    whyRefused: (tx, cents, now) => kind.whyRefused(tx, account, cents, now),
  };
}

/** The kind's SQL for an account: one case per kind (a new kind that is not handled here does not compile). */
function bind(account: CappedAccount): Bound {
  switch (account.kind) {
    case 'delegation':
      return bindKind(delegationKind, account);
  }
}

/** The charges with their accounts bound, in the one lock order: lock rank, then id. */
function inLockOrder(charges: readonly Charge[]): { charge: Charge; bound: Bound }[] {
  const list = charges.map((charge) => {
    if (charge.amountCents <= 0n) throw new RangeError('a charge must be a positive number of cents');
    return { charge, bound: bind(charge.account) };
  });
  return list.sort((x, y) =>
    x.bound.lockRank !== y.bound.lockRank
      ? x.bound.lockRank - y.bound.lockRank
      : x.bound.id < y.bound.id
        ? -1
        : x.bound.id > y.bound.id
          ? 1
          : 0,
  );
}

/**
 * Charges every account of the spend, or throws SpendRefused naming the first that refused (inactive, revoked,
 * expired, over its cap). The caller's transaction must then roll back: the charges before the refusal are
 * applied in it.
 */
export async function reserveIn(tx: SqlTx, spend: Spend, now: Date): Promise<Reservation> {
  const entries: { account: CappedAccount; ledgerId: string }[] = [];
  for (const { charge, bound } of inLockOrder(spend.charges)) {
    if (!(await bound.charge(tx, charge.amountCents, now))) {
      throw new SpendRefused(charge.account, await bound.whyRefused(tx, charge.amountCents, now));
    }
    const ledgerId = await bound.journal(
      tx,
      {
        kind: 'reserve',
        amountCents: charge.amountCents,
        reference: spend.reference ?? null,
        description: spend.description ?? null,
      },
      now,
    );
    entries.push({ account: charge.account, ledgerId });
  }
  return { entries };
}

/**
 * Gives the charges back (a fee leg not earned, an order that could not be paid), in the same lock order, each
 * never below zero spent. Resolves true when every charge was given back. A release does not look at the
 * account's state: a revoked or expired delegation still gets back what it was charged for nothing.
 */
export async function releaseIn(tx: SqlTx, release: Spend, now: Date): Promise<boolean> {
  let all = true;
  for (const { charge, bound } of inLockOrder(release.charges)) {
    if (!(await bound.giveBack(tx, charge.amountCents))) {
      all = false;
      continue;
    }
    await bound.journal(
      tx,
      {
        kind: 'release',
        amountCents: -charge.amountCents,
        reference: release.reference ?? null,
        description: release.description ?? null,
      },
      now,
    );
  }
  return all;
}
