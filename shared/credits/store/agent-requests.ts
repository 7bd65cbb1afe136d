// The statements on agent_request and credit_burn, hand SQL on both. One burn's writes stay together here, in the
// caller's transaction and in this order:
//   1. the credit_burn row: unique (agentRequestId, burnKey) makes each burn happen once, and on SQLite the first
//      statement being a write takes the database write lock at once;
//   2. `burned = burned + x` on the agent request, only while it stays within maxCredits (row count checked);
//   3. x taken from the holder's non-expired lots, soonest-expiring first, one ledger row (lots.ts).
import type { Dialect, Em } from '../../db/orm.js';
import { emSql, isUniqueViolation } from '../../db/sql.js';
import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import { fromColumn, toWire } from '../../money.js';
import { burnLots, creditBalance } from './lots.js';

export interface AgentRequestRow {
  readonly id: string;
  readonly planId: number;
  readonly agentId: string;
  readonly holderAddress: string;
  readonly maxCredits: bigint;
  readonly burned: bigint;
}

export async function agentRequestOf(em: Em, id: string): Promise<AgentRequestRow | undefined> {
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

/** A new agent request (initialize): nothing burnt yet. */
export async function insertAgentRequest(em: Em, row: Omit<AgentRequestRow, 'burned'>, now: Date): Promise<void> {
  await emSql(em).run(
    `insert into agent_request (id, plan_id, agent_id, holder_address, max_credits, burned, created_at)
     values (?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.planId, row.agentId, row.holderAddress, row.maxCredits, 0n, now],
  );
}

/** Thrown inside the burn transaction when the burn key was used before; handled after the rollback. */
export class DuplicateBurn extends Error {}

export interface NewBurn {
  readonly request: AgentRequestRow;
  readonly burnKey: string;
  readonly amount: bigint;
  readonly kind: 'redeem' | 'subtask';
  readonly tag: string | null;
  readonly description: string | null;
  readonly status: string | null;
}

/**
 * One burn inside the caller's transaction (steps 1-3 above); returns the holder's balance after it. Any refusal
 * throws (DuplicateBurn, 409 BCK.PROTOCOL.0025, InsufficientCredits) and the caller's transaction rolls back:
 * nothing is burnt and the burn key stays free for a retry.
 */
export async function burnIn(tx: Em, dialect: Dialect, input: NewBurn, now: Date): Promise<bigint> {
  const { request, amount } = input;
  const sql = emSql(tx, dialect);
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
    dialect,
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
}

/** The amount of the burn first recorded under this key (a repeated sub-task answers it). */
export async function burnedAmountOf(em: Em, agentRequestId: string, burnKey: string): Promise<bigint> {
  const first = await emSql(em).all(
    'select cast(amount as text) as amount from credit_burn where agent_request_id = ? and burn_key = ?',
    [agentRequestId, burnKey],
  );
  return fromColumn(first[0]?.amount ?? '0');
}
