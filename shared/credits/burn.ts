// Burning credits against an initialized agent request: POST /protocol/plans/redeem and
// POST /protocol/agent-sub-tasks. One burn is ONE transaction (store/agent-requests.ts burnIn: the credit_burn row,
// the bounded `burned` UPDATE, the lots and their ledger row). Any refusal throws and the transaction rolls back:
// nothing is burnt and the burn key stays free for a retry.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { toWire } from '../money.js';
import type { ActingUser } from '../auth/caller.js';
import { DuplicateBurn, type NewBurn, agentRequestOf, burnIn, burnedAmountOf } from './store/agent-requests.js';
import { InsufficientCredits, creditBalance } from './store/lots.js';
import { verifyProof } from './tokens.js';
import { type RedeemBody, type SubTaskBody, planIdOf } from './requests.js';
import { agentById } from '../registry/store/agents.js';

const requestNotFound = (id: string): AppError =>
  new AppError('BCK.PROTOCOL.0024', {
    details: `agent request ${id.slice(0, 100)} not found`,
    params: {
      agentRequestId: id.slice(0, 100),
    },
  });

type BurnOutcome = { type: 'burned'; balance: bigint } | { type: 'duplicate' };

async function burn(ctx: ServiceContext, input: NewBurn): Promise<BurnOutcome> {
  const { request, amount } = input;
  const now = ctx.now();
  try {
    const balance = await ctx.db.em().transactional((tx) => burnIn(tx, ctx.db.dialect, input, now));
    return { type: 'burned', balance };
  } catch (err) {
    if (err instanceof DuplicateBurn) return { type: 'duplicate' };
    if (err instanceof InsufficientCredits) {
      const balance = await creditBalance(ctx.db.em(), request.planId, request.holderAddress, ctx.now());
      throw new AppError('BCK.CREDITS.0003', {
        details: `${request.holderAddress} holds ${balance} credits of plan ${request.planId}; ${amount} needed`,
        params: {
          planId: String(request.planId),
          holderAddress: request.holderAddress,
          balance: toWire(balance),
          required: toWire(amount),
        },
      });
    }
    throw err;
  }
}

export interface BurnResult {
  success: true;
  agentRequestId: string;
  creditsRedeemed: string;
  balance: string;
  /** Sub-tasks only: true when this sub-task was recorded before and nothing was burnt now. */
  duplicate?: true;
}

/**
 * Redeem (agent owner): the proof must be one this service issued, for this plan and holder, for an agent the
 * caller owns; once per agentRequestId (409 BCK.PROTOCOL.0023); at most what the request may still burn.
 * No listing check: subscribers of an unlisted plan keep spending (interface, listing-flag table).
 */
export async function redeem(
  ctx: ServiceContext,
  signer: TokenSigner,
  caller: ActingUser,
  input: RedeemBody,
): Promise<BurnResult> {
  const claims = await verifyProof(signer, input.proof);
  if (planIdOf(input.planId) !== Number(claims.planId) || claims.holder !== input.holderAddress) {
    throw new AppError('BCK.PROTOCOL.0022', { details: 'the proof was issued for another plan or holder' });
  }
  const em = ctx.db.em();
  const agent = await agentById(em, claims.agentId);
  if (agent === null || agent.ownerId !== caller.userId) {
    throw new AppError('BCK.PROTOCOL.0004', {
      details: `agent ${claims.agentId} not found`,
      params: { agentId: claims.agentId },
    });
  }
  const request = await agentRequestOf(em, claims.agentRequestId);
  if (request === undefined) throw requestNotFound(claims.agentRequestId);
  if (
    request.planId !== Number(claims.planId) ||
    request.holderAddress !== claims.holder ||
    request.agentId !== claims.agentId
  ) {
    throw new AppError('BCK.PROTOCOL.0022', { details: 'the proof does not match its agent request' });
  }
  if (input.amount > claims.maxCredits) {
    throw new AppError('BCK.PROTOCOL.0025', {
      details: `the proof allows at most ${claims.maxCredits} credits`,
      params: {
        agentRequestId: request.id,
        maxCredits: toWire(claims.maxCredits),
      },
    });
  }
  const outcome = await burn(ctx, {
    request,
    burnKey: 'redeem',
    amount: input.amount,
    kind: 'redeem',
    tag: null,
    description: null,
    status: null,
  });
  if (outcome.type === 'duplicate') {
    throw new AppError('BCK.PROTOCOL.0023', {
      details: `agent request ${request.id} was already redeemed`,
      params: {
        agentRequestId: request.id,
      },
    });
  }
  return {
    success: true,
    agentRequestId: request.id,
    creditsRedeemed: toWire(input.amount),
    balance: toWire(outcome.balance),
  };
}

/**
 * Sub-task (agent owner): one burn per (agentRequestId, tag ?? 'default'). Repeating a sub-task burns nothing and
 * answers the first result (its amount, the current balance) with `duplicate: true`.
 */
export async function recordSubTask(ctx: ServiceContext, caller: ActingUser, input: SubTaskBody): Promise<BurnResult> {
  const em = ctx.db.em();
  const request = await agentRequestOf(em, input.agentRequestId);
  if (request === undefined) throw requestNotFound(input.agentRequestId);
  const agent = await agentById(em, request.agentId);
  // Another owner's request is reported exactly like an unknown one.
  if (agent === null || agent.ownerId !== caller.userId) throw requestNotFound(input.agentRequestId);
  const tag = input.tag ?? 'default';
  const burnKey = `subtask:${tag}`;
  const outcome = await burn(ctx, {
    request,
    burnKey,
    amount: input.creditsToRedeem,
    kind: 'subtask',
    tag,
    description: input.description ?? null,
    status: input.status ?? null,
  });
  if (outcome.type === 'burned') {
    return {
      success: true,
      agentRequestId: request.id,
      creditsRedeemed: toWire(input.creditsToRedeem),
      balance: toWire(outcome.balance),
    };
  }
  const first = await burnedAmountOf(em, request.id, burnKey);
  const balance = await creditBalance(em, request.planId, request.holderAddress, ctx.now());
  return {
    success: true,
    agentRequestId: request.id,
    creditsRedeemed: toWire(first),
    balance: toWire(balance),
    duplicate: true,
  };
}
