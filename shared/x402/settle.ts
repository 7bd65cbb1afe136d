// POST /x402/settle: burn `maxAmount` credits of the permission owner, once per (permission, agentRequestId).
// A settle is at most two attempts, each ONE transaction that starts by inserting the x402_settlement row:
//   1. the claim, then burnLots from the owner's non-expired lots (conditional UPDATEs), then
//      usedCredits += maxAmount `where status = 'Active'` (a revoke committed in between wins: rolled back);
//   2. only when the held credits fell short: the claim again, then, if the credits still fall short, one order
//      of the plan bought against the permission's delegation (auto-order.ts: cap reservation, payment,
//      plan_order row, credit lot), then the burn and usedCredits as in 1.
// The claim's unique key (permission_hash, agent_request_id) is what makes a settle happen once, from the
// database alone: an identical settle in ANY process blocks on that key until the first transaction ends, then
// meets the committed row (a duplicate: the first result, `duplicate: true`, current balance) or, if the first
// rolled back, makes its own attempt. So N identical settles buy at most one plan, however many admin
// processes share the database. On SQLite the claim being the first statement also takes the write lock at once.
//
// Credits short: with a delegation, the order is bought against it; without one, or when the order is refused,
// 402 BCK.CREDITS.0003.
//
// Unlisted plans (interface listing-flag table): "subscribers keep spending credits they hold", so a settle the
// held credits cover still burns. What an unlisted plan refuses is buying: a settle that would need an order (or a
// pay-as-you-go call with no credits) answers 403 BCK.PROTOCOL.0062 for svc:card-delegation and 201
// `{ success: false, errorReason: <0062 message> }` (no `code`) for svc:erc4337.
import { randomUUID } from 'node:crypto';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import type { ActingUser } from '../auth/caller.js';
import { InsufficientCredits, burnLots, creditBalance } from '../credits/store/lots.js';
import type { PlanRow } from '../credits/lookup.js';
import type { Em } from '../db/orm.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { type CardProcessor, sandboxCardProcessor } from '../settlement/card-processor.js';
import { orderAgainstDelegationIn } from './auto-order.js';
import { type PresentedPermission, checkPermission } from './check-permission.js';
import { Reason } from './reasons.js';
import {
  type PermissionRow,
  addUsedCredits,
  claimSettlement,
  dropSettlementClaim,
  firstSettlement,
  setSettlementOrder,
} from './store.js';
import { InvariantError } from '../errors/invariant.js';

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

type Attempt =
  | { type: 'burned'; settlementId: string; balance: bigint; orderId?: string | undefined }
  | { type: 'duplicate' }
  /** Attempt 1 only: the held credits do not cover the call. */
  | { type: 'short' }
  | { type: 'revoked' }
  | { type: 'unlisted' }
  /** The 402: why the credits could not be had (appended to its message). */
  | { type: 'insufficient'; why: string };

/** Carries an outcome out of the transaction, which rolls back everything it wrote (the claim included). */
class Rollback extends Error {
  constructor(readonly outcome: Exclude<Attempt, { type: 'burned' }>) {
    super(outcome.type);
  }
}

interface AttemptInput {
  readonly permission: PermissionRow;
  readonly plan: PlanRow;
  readonly input: SettleInput;
  /** Present on attempt 2: an order may be bought when the held credits still fall short. */
  readonly order?: { readonly cards: CardProcessor } | undefined;
}

/** Why buying cannot help, decided once the claim is held; undefined when an order may be tried. */
function buyingRefusal(a: AttemptInput, held: bigint): Exclude<Attempt, { type: 'burned' }> | undefined {
  if (!a.plan.listed) return { type: 'unlisted' };
  if (a.permission.delegationId == null)
    return { type: 'insufficient', why: ' and the permission names no delegation' };
  if (held + a.plan.creditsAmount < a.input.maxAmount)
    return { type: 'insufficient', why: '; one order of the plan would not cover it' };
  return undefined;
}

async function attempt(ctx: ServiceContext, a: AttemptInput): Promise<Attempt> {
  const { permission, plan, input } = a;
  const { dialect } = ctx.db;
  const now = ctx.now();
  const settlementId = randomUUID();
  const holder = permission.ownerAddress;
  try {
    return await ctx.db.em().transactional(async (tx: Em): Promise<Attempt> => {
      const sql = emSql(tx, dialect);
      const claim = {
        id: settlementId,
        permissionHash: permission.permissionHash,
        agentRequestId: input.agentRequestId,
        creditsRedeemed: input.maxAmount,
      };
      if (!(await claimSettlement(sql, claim, now))) throw new Rollback({ type: 'duplicate' });
      let orderId: string | undefined;
      if (a.order !== undefined) {
        const held = await creditBalance(tx, plan.id, holder, now);
        if (held < input.maxAmount) {
          const refused = buyingRefusal(a, held);
          if (refused !== undefined) throw new Rollback(refused);
          const order = await orderAgainstDelegationIn(
            { tx, dialect, now },
            permission,
            plan,
            ctx.config,
            a.order.cards,
            `x402-settle:${permission.permissionHash}:${input.agentRequestId}`,
          );
          if (order.type === 'refused') {
            const outcome = { type: 'insufficient', why: `; the auto-order was refused: ${order.reason}` } as const;
            if (!order.released) throw new Rollback(outcome);
            // The reservation and its release stay on the delegation's journal; the claim goes, so this
            // agentRequestId may be settled again once the wallet or the card can pay.
            await dropSettlementClaim(sql, settlementId);
            return outcome;
          }
          orderId = order.orderId;
          await setSettlementOrder(sql, settlementId, orderId);
        }
      }
      try {
        await burnLots(
          tx,
          dialect,
          { planId: plan.id, holderAddress: holder, amount: input.maxAmount, kind: 'redeem', reference: settlementId },
          now,
        );
      } catch (err) {
        if (!(err instanceof InsufficientCredits)) throw err;
        throw new Rollback(
          a.order === undefined
            ? { type: 'short' }
            : { type: 'insufficient', why: orderId === undefined ? '' : ' even after an order of the plan' },
        );
      }
      if ((await addUsedCredits(sql, permission.permissionHash, input.maxAmount)) !== 1)
        throw new Rollback({ type: 'revoked' });
      return { type: 'burned', settlementId, balance: await creditBalance(tx, plan.id, holder, now), orderId };
    });
  } catch (err) {
    if (err instanceof Rollback) return err.outcome;
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
  const first = await firstSettlement(emSql(em, ctx.db.dialect), permission.permissionHash, agentRequestId);
  if (first === undefined) throw new InvariantError('duplicate settle without a stored settlement');
  const balance = await creditBalance(em, plan.id, permission.ownerAddress, ctx.now());
  return {
    success: true,
    payer: permission.ownerAddress,
    transaction: first.id,
    network: permission.network,
    creditsRedeemed: toWire(first.creditsRedeemed),
    remainingBalance: toWire(balance),
    ...(first.orderId === null ? {} : { orderId: first.orderId }),
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
  return new AppError('BCK.CREDITS.0003', {
    details: `${permission.ownerAddress} holds ${balance} credits of plan ${plan.id}; ${maxAmount} needed${why}`,
    params: {
      planId: String(plan.id),
      holderAddress: permission.ownerAddress,
      balance: toWire(balance),
      required: toWire(maxAmount),
    },
  });
}

export async function settlePermission(
  ctx: ServiceContext,
  caller: ActingUser,
  input: SettleInput,
  deps: SettleDeps = {},
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
  let outcome = await attempt(ctx, { permission, plan, input });
  if (outcome.type === 'short')
    outcome = await attempt(ctx, { permission, plan, input, order: { cards: deps.cards ?? sandboxCardProcessor() } });
  switch (outcome.type) {
    case 'burned':
      return {
        success: true,
        payer: permission.ownerAddress,
        transaction: outcome.settlementId,
        network: permission.network,
        creditsRedeemed: toWire(input.maxAmount),
        remainingBalance: toWire(outcome.balance),
        ...(outcome.orderId === undefined ? {} : { orderId: outcome.orderId }),
      };
    case 'duplicate':
      return firstResult(ctx, permission, plan, input.agentRequestId);
    case 'revoked':
      return failure(permission, Reason.permissionRevoked, 'the permission was revoked');
    case 'unlisted':
      // The held credits do not cover the call: buying is the only way on, and an unlisted plan cannot be bought.
      if (permission.scheme === 'svc:card-delegation') {
        throw new AppError('BCK.PROTOCOL.0062', {
          details: `plan ${plan.id} is unlisted and cannot be purchased`,
          params: {
            planId: String(plan.id),
          },
        });
      }
      return failure(permission, Reason.unlistedPlan, `plan ${plan.id} is unlisted and cannot be purchased`);
    case 'short':
    case 'insufficient':
      throw await insufficient(ctx, permission, plan, input.maxAmount, outcome.type === 'short' ? '' : outcome.why);
  }
}
