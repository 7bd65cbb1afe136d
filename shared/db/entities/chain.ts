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

/** One amount reserved against a ChainBalance: a router payment's merchant leg or fee leg. */
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
    /** `router` (a merchant leg, authorized by `authNonce`) or `router_fee` (a fee leg, collected by the operator). */
    kind: p.string(),
    /** The router payment. */
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
