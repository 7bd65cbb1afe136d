// The one refusal of a spend: which account refused and why, and the one place it becomes a catalogue error.
import { AppError } from '../errors/app-error.js';
import type { CappedAccount, RefusalCause } from './accounts.js';

/**
 * How a message names the account. A delegation is the caller's own and named by its kind alone; a group budget is
 * one of several the spender's groups may have, so it is named with its id (the organization's, visible to the
 * spender's groups), and its over-cap message says what is left.
 */
function labelOf(subject: CappedAccount | CappedAccount['kind']): string {
  const kind = typeof subject === 'string' ? subject : subject.kind;
  switch (kind) {
    case 'delegation':
      return 'delegation';
    case 'groupBudget':
      return typeof subject === 'string' ? 'group budget' : `group budget ${subject.id}`;
  }
}

/** The refusal's message, safe to show: it names the account and the condition, never another user's data. */
export function describeRefusal(subject: CappedAccount | CappedAccount['kind'], cause: RefusalCause): string {
  const label = labelOf(subject);
  const kind = typeof subject === 'string' ? subject : subject.kind;
  switch (cause.reason) {
    case 'not_found':
      return `${label} not found`;
    case 'over_cap':
      if (cause.remainingCents === 0n) return `${label} is exhausted`;
      if (kind === 'groupBudget')
        return cause.remainingCents === undefined
          ? `${label} exceeded`
          : `${label} exceeded (${cause.remainingCents} cents left in this period)`;
      return `${label} budget exceeded`;
    default:
      return `${label} is ${cause.reason}`;
  }
}

/**
 * Thrown by `reserveIn` when an account's conditional UPDATE matched no row. The charges before it in the same
 * spend are already applied: the caller's transaction MUST roll back (let the error leave the transaction).
 */
export class SpendRefused extends Error {
  constructor(
    readonly account: CappedAccount,
    readonly why: RefusalCause,
  ) {
    super(describeRefusal(account, why));
    this.name = 'SpendRefused';
  }
}

/** The params naming the refusing account (`delegationId`, `groupBudgetId`), as every spend error carries them. */
export function accountParams(account: CappedAccount): Record<string, string> {
  switch (account.kind) {
    case 'delegation':
      return { delegationId: account.id };
    case 'groupBudget':
      return { groupBudgetId: account.id };
  }
}

/**
 * A refusal as the catalogue error: 402 BCK.ROUTER.0003 naming the account. For the refusal the charge itself
 * threw (SpendRefused) and for one predicted from a snapshot before it (an early refusal of the same condition).
 */
export function refusalError(account: CappedAccount, why: RefusalCause): AppError {
  return new AppError('BCK.ROUTER.0003', { details: describeRefusal(account, why), params: accountParams(account) });
}

export const spendRefusalError = (refused: SpendRefused): AppError => refusalError(refused.account, refused.why);
