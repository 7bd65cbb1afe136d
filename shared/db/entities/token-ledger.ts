import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/** Sandbox settlement backend: balance per (address, asset) in atomic units (sandbox ledger mode). */
export const TokenBalance = defineEntity({
  name: 'TokenBalance',
  tableName: 'token_balance',
  properties: {
    address: p.string().primary(),
    asset: p.string().primary(),
    balance: p.type(Int64Type).default(0),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

/**
 * Append-only double-entry journal: every transfer writes a debit and a credit row with the same txId, so
 * the deltas of a txId sum to zero. The faucet's counter-account is the pseudo-address `faucet`.
 */
export const TokenLedger = defineEntity({
  name: 'TokenLedger',
  tableName: 'token_ledger',
  indexes: [{ properties: ['address', 'asset', 'createdAt'] }, { properties: ['txId'] }],
  properties: {
    id: p.string().primary(),
    txId: p.string(),
    address: p.string(),
    asset: p.string(),
    delta: p.type(Int64Type),
    kind: p.string(),
    reference: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
