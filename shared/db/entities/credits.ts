import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/**
 * Credits are held in lots: plain mints and orders never expire (expiresAt null), mintExpirable lots stop
 * counting at expiresAt. A burn takes soonest-expiring lots first.
 */
export const CreditLot = defineEntity({
  name: 'CreditLot',
  tableName: 'credit_lot',
  indexes: [{ properties: ['planId', 'holderAddress'] }],
  properties: {
    id: p.string().primary(),
    planId: p.integer(),
    holderAddress: p.string(),
    remaining: p.type(Int64Type),
    expiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/**
 * Per (plan, holder): the sum of `remaining` over the pair's lots not yet reclaimed (shared/credits/store/lots.ts). The
 * conditional UPDATE that adds to it is where a balance past 2^63 - 1 is refused; its row is the pair's lock.
 */
export const CreditHolding = defineEntity({
  name: 'CreditHolding',
  tableName: 'credit_holding',
  properties: {
    planId: p.integer().primary(),
    holderAddress: p.string().primary(),
    total: p.type(Int64Type).default(0),
  },
});

/** Append-only: one row per credit movement (mint, order, redeem, sub-task, expired remainder written off). */
export const CreditLedger = defineEntity({
  name: 'CreditLedger',
  tableName: 'credit_ledger',
  indexes: [{ properties: ['planId', 'holderAddress', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    planId: p.integer(),
    holderAddress: p.string(),
    /** Signed: positive for mints and orders, negative for burns and written-off expired remainders. */
    delta: p.type(Int64Type),
    kind: p.string(),
    reference: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** An initialized agent request: the most it may burn, and how much it has burnt. */
export const AgentRequest = defineEntity({
  name: 'AgentRequest',
  tableName: 'agent_request',
  properties: {
    id: p.string().primary(),
    planId: p.integer(),
    agentId: p.string(),
    holderAddress: p.string(),
    maxCredits: p.type(Int64Type),
    burned: p.type(Int64Type).default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** One row per burn against an agent request; the unique key makes each burn happen once. */
export const CreditBurn = defineEntity({
  name: 'CreditBurn',
  tableName: 'credit_burn',
  uniques: [{ properties: ['agentRequestId', 'burnKey'] }],
  properties: {
    id: p.string().primary(),
    agentRequestId: p.string(),
    /** `redeem`, or `subtask:<tag>`. */
    burnKey: p.string(),
    amount: p.type(Int64Type),
    tag: p.string().nullable(),
    description: p.text().nullable(),
    /** A sub-task's status as its caller wrote it (SubTaskBody: free text): not a state of ours, so no enum. */
    status: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** A plan purchase: price paid through the settlement backend, credits minted. */
export const PlanOrder = defineEntity({
  name: 'PlanOrder',
  tableName: 'plan_order',
  indexes: [{ properties: ['buyerUserId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    planId: p.integer(),
    buyerUserId: p.string(),
    buyerAddress: p.string(),
    asset: p.string(),
    amountPaid: p.type(Int64Type),
    credits: p.type(Int64Type),
    txId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
