import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/**
 * The rpc settlement backend's view of one wallet's token on chain (shared/settlement/chain/reservations.ts):
 * `balance` is `balanceOf` read at block `block`; `reserved` is what payroute authorized from it that this read
 * does not reflect yet (reservations `open`, or `spent` in a later block). A payment reserves with one conditional
 * UPDATE `balance - reserved >= amount`, so processes sharing the database never authorize the same funds twice.
 */
export const ChainBalance = defineEntity({
  name: 'ChainBalance',
  tableName: 'chain_balance',
  properties: {
    address: p.string().primary(),
    asset: p.string().primary(),
    balance: p.type(Int64Type).default(0),
    /** The block the balance was read at; -1 before the first read. */
    block: p.type(Int64Type).default(-1),
    reserved: p.type(Int64Type).default(0),
    refreshedAt: p.datetime().nullable(),
  },
});

/**
 * `open`: authorized, not seen used on chain; `spent`: used in block `spentBlock`, which the balance read does not
 * reflect yet; `reflected`: a balance read at or after that block counts it (it left `reserved`); `released`: it can
 * no longer be used (expired unused, or never signed away) and left `reserved` without moving money.
 */
export const RESERVATION_STATUSES = ['open', 'spent', 'reflected', 'released'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** One amount reserved against a ChainBalance: a router payment's merchant leg or fee leg, or a plan order's leg. */
export const ChainReservation = defineEntity({
  name: 'ChainReservation',
  tableName: 'chain_reservation',
  indexes: [
    { properties: ['address', 'asset', 'status'] },
    // The reconciler's work list: only reservations not yet settled or released, a handful.
    { name: 'chain_reservation_open_index', properties: ['createdAt'], where: "status = 'open'" },
  ],
  properties: {
    id: p.string().primary(),
    address: p.string(),
    asset: p.string(),
    amount: p.type(Int64Type),
    /** `router` (a merchant leg, authorized by `authNonce`), `router_fee` (a fee leg, collected by the operator) or
     *  `order` (a plan order's payment to one receiver, sent by the operator). */
    kind: p.string(),
    /** The router payment, or the chain order. */
    reference: p.string(),
    /** The EIP-3009 authorization a merchant holds; null for a fee leg (signed only when it is collected). */
    authNonce: p.string().nullable(),
    /** Its validBefore (unix seconds): unused once a block's time reaches it, it can never be used. */
    validBefore: p.type(Int64Type).nullable(),
    /** The balance's block when reserved: the authorization cannot have been used before it. */
    fromBlock: p.type(Int64Type),
    status: p.enum(RESERVATION_STATUSES),
    spentBlock: p.type(Int64Type).nullable(),
    txHash: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

/** `submitting`: its transfer was signed and is being sent; `paid`: mined, credits minted; `failed`: nothing moved. */
export const CHAIN_ORDER_STATUSES = ['submitting', 'paid', 'failed'] as const;
export type ChainOrderStatus = (typeof CHAIN_ORDER_STATUSES)[number];

/**
 * A plan order paid on chain (rpc backend; shared/credits/chain-order.ts), written before its transfer is sent:
 * whatever happens to the request (a crash, a confirmation that timed out), the reconciler finds the order and
 * finishes it from the chain: its legs' authorizations used -> paid and credited once; unused past validBefore ->
 * failed, nothing credited. Its legs are chain_reservation rows (kind `order`, reference = this id).
 */
export const ChainOrder = defineEntity({
  name: 'ChainOrder',
  tableName: 'chain_order',
  indexes: [{ name: 'chain_order_submitting_index', properties: ['createdAt'], where: "status = 'submitting'" }],
  properties: {
    id: p.string().primary(),
    planId: p.string(),
    buyerUserId: p.string(),
    /** Who gets the credits (the buyer's wallet). */
    holderAddress: p.string(),
    /** Who pays (the buyer's custodial wallet). */
    payerAddress: p.string(),
    asset: p.string(),
    amountPaid: p.type(Int64Type),
    credits: p.type(Int64Type),
    status: p.enum(CHAIN_ORDER_STATUSES),
    txHash: p.string().nullable(),
    failureReason: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
