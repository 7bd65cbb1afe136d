// Reserving and releasing against one delegation's cap on its own (one transaction holding nothing else). Every
// charge of a cap, here and in the router's and the x402 auto-order's transactions, goes through the spend module
// (shared/spend): ONE conditional UPDATE (active, not expired, within the cap) whose affected-row count decides,
// plus an append-only delegation_transaction row.
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import type { Delegation } from '../db/entities/index.js';
import { SpendRefused, delegationAccount, releaseIn, reserveIn } from '../spend/index.js';
import type { DelegationStatus } from './requests.js';
import { findOwnDelegation } from './store.js';

export interface ReserveRequest {
  readonly delegationId: string;
  /** The owner: a reserve never crosses users. */
  readonly userId: string;
  readonly amountCents: bigint;
  /** The spending API key; refused when the delegation is bound to another key. */
  readonly apiKeyId?: string | undefined;
  /** The plan being paid for; refused when the delegation is restricted to another plan. */
  readonly planId?: number | undefined;
  /** The payee; refused when not in allowedRecipients. */
  readonly recipient?: string | undefined;
  readonly reference?: string | undefined;
  readonly description?: string | undefined;
  /** The delegation row the caller already read (its immutable restrictions); saves a read on the hot path. */
  readonly snapshot?: InferEntity<typeof Delegation> | undefined;
}

export type ReserveResult =
  | { type: 'reserved'; transactionId: string; currency: string; provider: string }
  | { type: 'refused'; reason: string; status: DelegationStatus | 'NotFound' | 'NotAllowed' };

/** The delegation status a refusal reports (`Active` when the cap still holds something, just not enough). */
function statusOf(refused: SpendRefused): DelegationStatus | 'NotFound' | 'NotAllowed' {
  switch (refused.why.reason) {
    case 'not_found':
      return 'NotFound';
    case 'revoked':
      return 'Revoked';
    case 'expired':
      return 'Expired';
    case 'inactive':
      return 'NotAllowed';
    case 'over_cap':
      return refused.why.remainingCents === 0n ? 'Exhausted' : 'Active';
  }
}

/**
 * Reserves `amountCents` against the cap. The immutable restrictions (owner, key, plan, recipients) are read
 * first; the mutable ones (status, expiry, cap) are decided by the spend module's conditional UPDATE alone, so
 * concurrent reserves in any number of processes never overspend.
 */
export async function reserve(ctx: ServiceContext, req: ReserveRequest): Promise<ReserveResult> {
  if (req.amountCents <= 0n) return { type: 'refused', reason: 'amount must be positive', status: 'NotAllowed' };
  const snapshot =
    req.snapshot !== undefined && req.snapshot.id === req.delegationId && req.snapshot.userId === req.userId
      ? req.snapshot
      : await findOwnDelegation(ctx.db.em(), req.userId, req.delegationId);
  if (snapshot === null) return { type: 'refused', reason: 'delegation not found', status: 'NotFound' };
  if (snapshot.apiKeyId != null && req.apiKeyId !== undefined && snapshot.apiKeyId !== req.apiKeyId) {
    return { type: 'refused', reason: 'this API key may not spend against the delegation', status: 'NotAllowed' };
  }
  if (snapshot.planId != null && req.planId !== undefined && snapshot.planId !== req.planId) {
    return { type: 'refused', reason: 'the delegation is restricted to another plan', status: 'NotAllowed' };
  }
  if (snapshot.allowedRecipients != null && req.recipient !== undefined) {
    const to = req.recipient.toLowerCase();
    if (!snapshot.allowedRecipients.some((a) => a.toLowerCase() === to)) {
      return { type: 'refused', reason: 'recipient is not in allowedRecipients', status: 'NotAllowed' };
    }
  }
  const now = ctx.now();
  const spend = {
    charges: [{ account: delegationAccount(req.delegationId, req.userId), amountCents: req.amountCents }],
    reference: req.reference,
    description: req.description,
  };
  try {
    const { entries } = await ctx.db.sql.transaction((tx) => reserveIn(tx, spend, now));
    const transactionId = entries.find((e) => e.account.id === req.delegationId)?.ledgerId ?? '';
    return { type: 'reserved', transactionId, currency: snapshot.currency, provider: snapshot.provider };
  } catch (err) {
    if (!(err instanceof SpendRefused)) throw err;
    return { type: 'refused', reason: err.message, status: statusOf(err) };
  }
}

/** Gives back a reserved amount (e.g. a fee leg not settled). Never releases more than was spent. */
export async function release(
  ctx: ServiceContext,
  req: { delegationId: string; userId: string; amountCents: bigint; reference?: string; description?: string },
): Promise<boolean> {
  if (req.amountCents <= 0n) return false;
  const now = ctx.now();
  const spend = {
    charges: [{ account: delegationAccount(req.delegationId, req.userId), amountCents: req.amountCents }],
    reference: req.reference,
    description: req.description,
  };
  return ctx.db.sql.transaction((tx) => releaseIn(tx, spend, now));
}
