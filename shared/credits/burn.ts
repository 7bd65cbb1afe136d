// Burning credits against an initialized agent request: POST /protocol/plans/redeem and
// POST /protocol/agent-sub-tasks. One burn is ONE transaction, in this order:
//   1. insert the credit_burn row: unique (agentRequestId, burnKey) makes each burn happen once, and on SQLite
//      the first statement being a write takes the database write lock at once;
//   2. `burned = burned + x` on the agent request, only while it stays within maxCredits (row count checked);
//   3. take x from the holder's non-expired lots, soonest-expiring first (lots.ts), one ledger row.
// Any refusal throws and the transaction rolls back: nothing is burnt and the burn key stays free for a retry.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { Agent } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';
import { emSql, isUniqueViolation } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { fromColumn, toWire } from '../money.js';
import type { ActingUser } from '../auth/caller.js';
import { InsufficientCredits, burnLots, creditBalance } from './lots.js';
import { verifyProof } from './tokens.js';
import { type RedeemBody, type SubTaskBody, planIdOf } from './requests.js';

interface AgentRequestRow {
  readonly id: string;
  readonly planId: number;
  readonly agentId: string;
  readonly holderAddress: string;
  readonly maxCredits: bigint;
  readonly burned: bigint;
}

async function agentRequestOf(em: Em, id: string): Promise<AgentRequestRow | undefined> {
  const rows = await emSql(em).all(
    `select id, plan_id, agent_id, holder_address, cast(max_credits as text) as max_credits, cast(burned as text) as burned
     from agent_request where id = ?`,
    [id],
  );
  const r = rows[0];
  if (r === undefined) return undefined;
  return {
    id: String(r.id),
    planId: Number(r.plan_id),
    agentId: String(r.agent_id),
    holderAddress: String(r.holder_address),
    maxCredits: fromColumn(r.max_credits),
    burned: fromColumn(r.burned),
  };
}

const requestNotFound = (id: string): AppError =>
  new AppError('BCK.PROTOCOL.0024', {
    details: `agent request ${id.slice(0, 100)} not found`,
    params: {
      agentRequestId: id.slice(0, 100),
    },
  });

/** Thrown inside the burn transaction when the burn key was used before; handled after the rollback. */
class DuplicateBurn extends Error {}

interface BurnInput {
  readonly request: AgentRequestRow;
  readonly burnKey: string;
  readonly amount: bigint;
  readonly kind: 'redeem' | 'subtask';
  readonly tag: string | null;
  readonly description: string | null;
  readonly status: string | null;
}

type BurnOutcome = { type: 'burned'; balance: bigint } | { type: 'duplicate' };

async function burn(ctx: ServiceContext, input: BurnInput): Promise<BurnOutcome> {
  const { request, amount } = input;
  const now = ctx.now();
  try {
    const balance = await ctx.db.em().transactional(async (tx) => {
      const sql = emSql(tx, ctx.db.dialect);
      try {
        // Bound, not inlined: tag, description and status are the caller's text.
        await sql.run(
          `insert into credit_burn (id, agent_request_id, burn_key, amount, tag, description, status, created_at)
           values (?, ?, ?, ?, ?, ?, ?, ?)`,
          [randomUUID(), request.id, input.burnKey, amount, input.tag, input.description, input.status, now],
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw new DuplicateBurn();
        throw err;
      }
      // `burned <= max_credits - x` rather than `burned + x <= max_credits`: the sum could overflow BIGINT.
      const updated = await sql.run(
        'update agent_request set burned = burned + ? where id = ? and burned <= max_credits - ?',
        [amount, request.id, amount],
      );
      if (updated !== 1) {
        throw new AppError('BCK.PROTOCOL.0025', {
          details: `burning ${amount} would exceed the ${request.maxCredits} credits agent request ${request.id} may burn`,
          params: {
            agentRequestId: request.id,
            maxCredits: toWire(request.maxCredits),
          },
        });
      }
      await burnLots(
        tx,
        ctx.db.dialect,
        {
          planId: request.planId,
          holderAddress: request.holderAddress,
          amount,
          kind: input.kind,
          reference: request.id,
        },
        now,
      );
      return creditBalance(tx, request.planId, request.holderAddress, now);
    });
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
  const agent = await em.findOne(Agent, { id: claims.agentId });
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
  const agent = await em.findOne(Agent, { id: request.agentId });
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
  const first = await emSql(em).all(
    'select cast(amount as text) as amount from credit_burn where agent_request_id = ? and burn_key = ?',
    [request.id, burnKey],
  );
  const balance = await creditBalance(em, request.planId, request.holderAddress, ctx.now());
  return {
    success: true,
    agentRequestId: request.id,
    creditsRedeemed: toWire(fromColumn(first[0]?.amount ?? '0')),
    balance: toWire(balance),
    duplicate: true,
  };
}
