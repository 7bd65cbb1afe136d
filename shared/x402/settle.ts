// POST /x402/settle (DESIGN §6): burn `maxAmount` credits of the permission owner, once per
// (permission, agentRequestId). One burn is ONE transaction, in this order:
//   1. insert the x402_settlement row: its unique key makes each settle happen once, and on SQLite the first
//      statement being a write takes the database write lock at once;
//   2. burnLots from the owner's non-expired lots (conditional UPDATEs, InsufficientCredits rolls back);
//   3. usedCredits += maxAmount `where status = 'Active'`, so a revoke committed in between wins (rolls back).
// A repeat of the same agentRequestId returns the first result (`duplicate: true`, current balance).
//
// Credits short: with a delegation, one order is bought against it first (auto-order.ts), then the burn is
// retried; without one, or when the order is refused, 402 BCK.CREDITS.0003.
//
// Unlisted plans (interface listing-flag table, DESIGN §5): "subscribers keep spending credits they hold", so a
// settle the held credits cover still burns. What an unlisted plan refuses is buying: a settle that would need an
// order (or a pay-as-you-go call with no credits) answers 403 BCK.PROTOCOL.0062 for svc:card-delegation and
// 201 `{ success: false, errorReason: <0062 message> }` (no `code`) for svc:erc4337.
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { QueryResult } from '@mikro-orm/sql';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import type { ActingUser } from '../auth/caller.js';
import { InsufficientCredits, burnLots, creditBalance } from '../credits/lots.js';
import type { PlanRow } from '../credits/lookup.js';
import { X402Settlement } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { fromColumn, toWire } from '../money.js';
import { type CardProcessor, sandboxCardProcessor } from '../settlement/card-processor.js';
import { orderAgainstDelegation } from './auto-order.js';
import { type PresentedPermission, checkPermission } from './check-permission.js';
import type { PermissionRow } from './permissions.js';
import { Reason } from './reasons.js';
import { sha256Hex } from '../crypto/hashing.js';
import { keyedSerializer } from '../serial.js';

export type SettleResponse =
  | {
      success: true;
      payer: string;
      transaction: string;
      network: string;
      creditsRedeemed: string;
      remainingBalance: string;
      orderId?: string;
      duplicate?: true;
    }
  | { success: false; errorReason: string; errorMessage: string; payer?: string; transaction: ''; network: string };

export interface SettleInput extends PresentedPermission {
  readonly maxAmount: bigint;
  readonly agentRequestId: string;
}

export interface SettleDeps {
  /** The card processor for svc:card-delegation auto-orders; the sandbox one by default. */
  readonly cards?: CardProcessor;
}

/** Thrown inside the burn transaction; handled after the rollback. */
class DuplicateSettle extends Error {}
class PermissionNoLongerActive extends Error {}

type BurnOutcome =
  | { type: 'burned'; settlementId: string; balance: bigint }
  | { type: 'duplicate' }
  | { type: 'insufficient' }
  | { type: 'revoked' };

async function burnOnce(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  input: SettleInput,
  orderId: string | null,
): Promise<BurnOutcome> {
  const now = ctx.now();
  const settlementId = randomUUID();
  try {
    const balance = await ctx.db.em().transactional(async (tx) => {
      try {
        await tx.insert(X402Settlement, {
          id: settlementId,
          permissionHash: permission.permissionHash,
          agentRequestId: input.agentRequestId,
          creditsRedeemed: input.maxAmount,
          orderId,
          createdAt: now,
        });
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) throw new DuplicateSettle();
        throw err;
      }
      await burnLots(
        tx,
        ctx.db.dialect,
        {
          planId: plan.id,
          holderAddress: permission.ownerAddress,
          amount: input.maxAmount,
          kind: 'redeem',
          reference: settlementId,
        },
        now,
      );
      const res = await tx.execute<QueryResult>(
        `update x402_permission set used_credits = used_credits + ? where permission_hash = ? and status = 'Active'`,
        [input.maxAmount, permission.permissionHash],
        'run',
      );
      if (res.affectedRows !== 1) throw new PermissionNoLongerActive();
      return creditBalance(tx, plan.id, permission.ownerAddress, now);
    });
    return { type: 'burned', settlementId, balance };
  } catch (err) {
    if (err instanceof DuplicateSettle) return { type: 'duplicate' };
    if (err instanceof InsufficientCredits) return { type: 'insufficient' };
    if (err instanceof PermissionNoLongerActive) return { type: 'revoked' };
    throw err;
  }
}

async function firstResult(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  agentRequestId: string,
): Promise<SettleResponse> {
  const em = ctx.db.em();
  const rows = await em.execute<{ id: string; credits_redeemed: string; order_id: string | null }[]>(
    'select id, cast(credits_redeemed as text) as credits_redeemed, order_id from x402_settlement where permission_hash = ? and agent_request_id = ?',
    [permission.permissionHash, agentRequestId],
  );
  const first = rows[0];
  if (first === undefined) throw new Error('duplicate settle without a stored settlement');
  const balance = await creditBalance(em, plan.id, permission.ownerAddress, ctx.now());
  return {
    success: true,
    payer: permission.ownerAddress,
    transaction: first.id,
    network: permission.network,
    creditsRedeemed: toWire(fromColumn(first.credits_redeemed)),
    remainingBalance: toWire(balance),
    ...(first.order_id == null ? {} : { orderId: first.order_id }),
    duplicate: true,
  };
}

const failure = (permission: PermissionRow, errorReason: string, errorMessage: string): SettleResponse => ({
  success: false,
  errorReason,
  errorMessage,
  payer: permission.ownerAddress,
  transaction: '',
  network: permission.network,
});

async function insufficient(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  maxAmount: bigint,
  why: string,
): Promise<AppError> {
  const balance = await creditBalance(ctx.db.em(), plan.id, permission.ownerAddress, ctx.now());
  return new AppError(
    'BCK.CREDITS.0003',
    `${permission.ownerAddress} holds ${balance} credits of plan ${plan.id}; ${maxAmount} needed${why}`,
    {
      planId: String(plan.id),
      holderAddress: permission.ownerAddress,
      balance: toWire(balance),
      required: toWire(maxAmount),
    },
  );
}

/**
 * Settles of one (permission, agentRequestId) in flight in this process. A repeat waits for the first to end and
 * then meets its result through the unique key (a duplicate). Without this, repeats that arrive while the credits
 * are short each failed their first burn (rolled back: no row holds the key yet) and each bought the plan: N
 * identical retries made N orders, reserved N times on the delegation (and charged a card N times), for one burn.
 */
const settling = keyedSerializer();

export async function settlePermission(
  ctx: ServiceContext,
  caller: ActingUser,
  input: SettleInput,
  deps: SettleDeps = {},
): Promise<SettleResponse> {
  // Keyed by the token's hash: the token itself is a bearer secret and is not kept as a map key.
  const key = `${sha256Hex(input.x402AccessToken)}\u0000${input.agentRequestId}`;
  return settling(key, () => settleOnce(ctx, caller, input, deps));
}

async function settleOnce(
  ctx: ServiceContext,
  caller: ActingUser,
  input: SettleInput,
  deps: SettleDeps,
): Promise<SettleResponse> {
  const checked = await checkPermission(ctx, caller, input);
  if (checked.type === 'invalid') {
    const { reason, message, payer, network } = checked;
    return {
      success: false,
      errorReason: reason,
      errorMessage: message,
      ...(payer === undefined ? {} : { payer }),
      transaction: '',
      network: network ?? NETWORKS[ctx.config.ENVIRONMENT].caip2,
    };
  }
  const { permission, plan } = checked;
  const done = (outcome: BurnOutcome & { type: 'burned' }, orderId?: string): SettleResponse => ({
    success: true,
    payer: permission.ownerAddress,
    transaction: outcome.settlementId,
    network: permission.network,
    creditsRedeemed: toWire(input.maxAmount),
    remainingBalance: toWire(outcome.balance),
    ...(orderId === undefined ? {} : { orderId }),
  });

  const first = await burnOnce(ctx, permission, plan, input, null);
  switch (first.type) {
    case 'burned':
      return done(first);
    case 'duplicate':
      return firstResult(ctx, permission, plan, input.agentRequestId);
    case 'revoked':
      return failure(permission, Reason.permissionRevoked, 'the permission was revoked');
    case 'insufficient':
      break;
  }

  // The held credits do not cover the call: buying is the only way on, and an unlisted plan cannot be bought.
  if (!plan.listed) {
    if (permission.scheme === 'svc:card-delegation') {
      throw new AppError('BCK.PROTOCOL.0062', `plan ${plan.id} is unlisted and cannot be purchased`, {
        planId: String(plan.id),
      });
    }
    return failure(permission, Reason.unlistedPlan, `plan ${plan.id} is unlisted and cannot be purchased`);
  }
  if (permission.delegationId == null)
    throw await insufficient(ctx, permission, plan, input.maxAmount, ' and the permission names no delegation');
  const balance = await creditBalance(ctx.db.em(), plan.id, permission.ownerAddress, ctx.now());
  if (balance + plan.creditsAmount < input.maxAmount) {
    throw await insufficient(ctx, permission, plan, input.maxAmount, '; one order of the plan would not cover it');
  }
  const order = await orderAgainstDelegation(ctx, permission, plan, deps.cards ?? sandboxCardProcessor(ctx));
  if (order.type === 'refused')
    throw await insufficient(ctx, permission, plan, input.maxAmount, `; the auto-order was refused: ${order.reason}`);

  const second = await burnOnce(ctx, permission, plan, input, order.orderId);
  switch (second.type) {
    case 'burned':
      return done(second, order.orderId);
    case 'duplicate':
      return firstResult(ctx, permission, plan, input.agentRequestId);
    case 'revoked':
      return failure(permission, Reason.permissionRevoked, 'the permission was revoked');
    case 'insufficient':
      throw await insufficient(ctx, permission, plan, input.maxAmount, ' even after an order of the plan');
  }
}
