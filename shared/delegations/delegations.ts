// Spending delegations: create, read, revoke, and a reserve or release of one delegation on its own (one
// transaction holding nothing else). Every charge of a cap, here and in the router's and the x402 auto-order's
// transactions, goes through the spend module (shared/spend): ONE conditional UPDATE (active, not expired,
// within the cap) whose affected-row count decides, plus an append-only delegation_transaction row.
import { randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/sql.js';
import { sqlCondition } from '../db/conditions.js';
import { ApiKey, Delegation, DelegationTransaction, Plan } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { toWire } from '../money.js';
import { SpendRefused, delegationAccount, releaseIn, reserveIn } from '../spend/index.js';
import { orgFundingFor } from '../organizations/spending.js';
import { type DelegationRecord, delegationRecord } from './responses.js';
import { type CreateDelegationInput, FIAT_PROVIDERS, type DelegationStatus } from './requests.js';

export const DELEGATION_TOKEN_AUDIENCE = 'payroute:delegation';

export async function createDelegation(
  ctx: ServiceContext,
  signer: TokenSigner,
  owner: { userId: string },
  input: CreateDelegationInput,
): Promise<{ delegationId: string; delegationToken?: string }> {
  const em = ctx.db.em();
  if (input.apiKeyId !== undefined) {
    const key = await em.findOne(ApiKey, { id: input.apiKeyId, userId: owner.userId, revokedAt: null });
    if (key === null) throw new AppError('BCK.HTTP.0400', { details: 'apiKeyId is not an active API key of yours' });
  }
  if (input.planId !== undefined) {
    const plan = await em.findOne(Plan, { id: input.planId });
    if (plan === null || (!plan.listed && plan.ownerId !== owner.userId)) {
      throw new AppError('BCK.HTTP.0400', { details: `planId ${input.planId} is not a plan you can buy` });
    }
  }
  const funding =
    input.organizationWalletId === undefined
      ? undefined
      : await orgFundingFor(ctx, owner.userId, input.organizationWalletId, input.groupId);
  const now = ctx.now();
  const { id } = newDelegation(em, owner, { ...input, ...funding }, now);
  await em.flush();
  if (!(FIAT_PROVIDERS as readonly string[]).includes(input.provider)) return { delegationId: id };
  // Fiat-backed: a service-signed JWT naming the delegation, cap, currency, expiry (exp) and owner (sub).
  const delegationToken = await signer.sign(
    {
      delegationId: id,
      provider: input.provider,
      spendingLimitCents: toWire(input.spendingLimitCents),
      currency: input.currency,
    },
    { audience: DELEGATION_TOKEN_AUDIENCE, subject: owner.userId, ttlSecs: input.durationSecs },
  );
  return { delegationId: id, delegationToken };
}

/**
 * Adds a new Active delegation to `em`'s unit of work (the caller flushes, so it can commit the delegation with
 * what it belongs to: an OAuth grant and its code are created in the same transaction).
 */
export function newDelegation(
  em: Em,
  owner: { userId: string },
  input: Pick<CreateDelegationInput, 'provider' | 'currency' | 'spendingLimitCents' | 'durationSecs'> &
    Partial<Pick<CreateDelegationInput, 'allowedRecipients' | 'planId' | 'apiKeyId' | 'providerPaymentMethodId'>> & {
      orgWalletId?: string | undefined;
      groupId?: string | undefined;
    },
  now: Date,
): { id: string; expiresAt: Date } {
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + input.durationSecs * 1000);
  em.create(Delegation, {
    id,
    userId: owner.userId,
    provider: input.provider,
    status: 'Active',
    currency: input.currency,
    spendingLimitCents: input.spendingLimitCents,
    amountSpentCents: 0n,
    transactionCount: 0,
    allowedRecipients: input.allowedRecipients ?? null,
    planId: input.planId ?? null,
    apiKeyId: input.apiKeyId ?? null,
    providerPaymentMethodId: input.providerPaymentMethodId ?? null,
    orgWalletId: input.orgWalletId ?? null,
    groupId: input.orgWalletId === undefined ? null : (input.groupId ?? null),
    expiresAt,
    revokedAt: null,
    createdAt: now,
  });
  return { id, expiresAt };
}

const delegationNotFound = (delegationId: string): AppError =>
  new AppError('BCK.DELEGATION.0001', { details: `delegation ${delegationId} not found` });

async function ownDelegation(ctx: ServiceContext, userId: string, delegationId: string) {
  const d = await ctx.db.em().findOne(Delegation, { id: delegationId, userId });
  if (d === null) throw delegationNotFound(delegationId);
  return d;
}

export async function getDelegation(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
): Promise<DelegationRecord> {
  return delegationRecord(await ownDelegation(ctx, userId, delegationId), ctx.now());
}

/**
 * A connector's read: only its grant's own delegation. Any other id, even one of the same user's, is the 404 of an
 * unknown delegation, word for word, so a connector learns nothing of the user's other delegations.
 */
export async function getGrantDelegation(
  ctx: ServiceContext,
  grant: { userId: string; delegationId: string },
  delegationId: string,
): Promise<DelegationRecord> {
  if (delegationId.toLowerCase() !== grant.delegationId.toLowerCase()) throw delegationNotFound(delegationId);
  return getDelegation(ctx, grant.userId, delegationId);
}

export async function listDelegations(
  ctx: ServiceContext,
  caller: { userId: string; apiKeyId: string },
  q: { page: number; offset: number; accessible?: boolean | undefined; status?: DelegationStatus | undefined },
): Promise<{ total: number; page: number; offset: number; delegations: DelegationRecord[] }> {
  const now = ctx.now();
  // Every filter narrows: `accessible` AND `status` (a switch that assigned into one object let `status` replace
  // the accessible conditions, so accessible=true&status=Revoked listed revoked delegations).
  const conditions: Record<string, unknown>[] = [];
  const active = {
    status: 'Active',
    expiresAt: { $gt: now },
    ...sqlCondition('amount_spent_cents < spending_limit_cents'),
  };
  if (q.accessible === true) conditions.push(active, { $or: [{ apiKeyId: null }, { apiKeyId: caller.apiKeyId }] });
  switch (q.status) {
    case 'Active':
      conditions.push(active);
      break;
    case 'Revoked':
      conditions.push({ status: 'Revoked' });
      break;
    case 'Expired':
      conditions.push({ status: 'Active', expiresAt: { $lte: now } });
      break;
    case 'Exhausted':
      conditions.push({
        status: 'Active',
        expiresAt: { $gt: now },
        ...sqlCondition('amount_spent_cents >= spending_limit_cents'),
      });
      break;
    default:
  }
  const where = conditions.length === 0 ? { userId: caller.userId } : { userId: caller.userId, $and: conditions };
  const [rows, total] = await ctx.db.em().findAndCount(Delegation, where, {
    orderBy: { createdAt: 'desc', id: 'asc' },
    limit: q.offset,
    offset: (q.page - 1) * q.offset,
  });
  return { total, page: q.page, offset: q.offset, delegations: rows.map((r) => delegationRecord(r, now)) };
}

export async function revokeDelegation(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
): Promise<{ success: true; delegationId: string; status: 'Revoked' }> {
  await ownDelegation(ctx, userId, delegationId);
  await ctx.db
    .em()
    .nativeUpdate(
      Delegation,
      { id: delegationId, userId, status: 'Active' },
      { status: 'Revoked', revokedAt: ctx.now() },
    );
  return { success: true, delegationId, status: 'Revoked' };
}

export async function listDelegationTransactions(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
  q: { page: number; offset: number },
) {
  await ownDelegation(ctx, userId, delegationId);
  const [rows, total] = await ctx.db
    .em()
    .findAndCount(
      DelegationTransaction,
      { delegationId },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.offset, offset: (q.page - 1) * q.offset },
    );
  return {
    total,
    page: q.page,
    offset: q.offset,
    transactions: rows.map((t) => ({
      transactionId: t.id,
      kind: t.kind,
      amountCents: toWire(t.amountCents),
      reference: t.reference ?? null,
      description: t.description ?? null,
      createdAt: t.createdAt.toISOString(),
    })),
  };
}

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
      : await ctx.db.em().findOne(Delegation, { id: req.delegationId, userId: req.userId });
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
