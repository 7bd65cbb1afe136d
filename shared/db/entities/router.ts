import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/**
 * A payment is written Issued (its issuance transaction) and moves once to Settled (a receipt or /settled) or
 * Failed (the merchant refused the paid call). With the rpc settlement backend the chain decides in the end: an
 * authorization used on chain is Settled, one still unused when its validBefore passed is Expired (its cap charge
 * given back). `Pending` is never written now: an earlier version wrote a claim
 * row first, and one left behind by a crash is read only to be skipped (shared/router/payment-store.ts whereOf and staleFeeLegs).
 */
export const PAYMENT_STATUSES = ['Issued', 'Settled', 'Failed', 'Pending', 'Expired'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * The fee leg: `none` (no fee), `reserved` (mode B: waiting for an answer the caller received), `settled` (moved
 * to the fee recipient) or `released` (its cap share given back); it leaves `reserved` once.
 */
export const FEE_STATUSES = ['none', 'reserved', 'settled', 'released'] as const;
export type FeeStatus = (typeof FEE_STATUSES)[number];

/**
 * The router payment record. The unique (userId, requestId) key is the durable idempotency claim across processes
 * (docs/architecture.md, the payment router's step 6). Amounts are atomic units of `asset`; cents are the cap charge.
 */
export const RouterPayment = defineEntity({
  name: 'RouterPayment',
  tableName: 'router_payment',
  // (userId, authNonce): one payment per EIP-3009 authorization. An MPP challenge fixes its nonce
  // (keccak256(id + realm)), so a second payment of the same challenge could never be collected (the token refuses
  // a used nonce) while the first had already moved the money; x402 nonces are random and never meet.
  // (userId, requestScope, requestId): the durable idempotency claim. A requestId names one payment among the
  // user's API-key calls (scope '') or among one OAuth grant's calls (scope: the grant id), so a connector's
  // requestIds never collide with the user's own or another connector's.
  uniques: [{ properties: ['userId', 'requestScope', 'requestId'] }, { properties: ['userId', 'authNonce'] }],
  indexes: [
    { properties: ['userId', 'createdAt'] },
    // A connector's listing of its own grant's payments.
    { properties: ['grantId', 'createdAt'] },
    { properties: ['delegationId', 'createdAt'] },
    // The fee sweep's (payment-store.ts staleFeeLegs): only payments whose fee leg waits for an answer are in it, a handful.
    { name: 'router_payment_fee_reserved_index', properties: ['createdAt'], where: "fee_status = 'reserved'" },
  ],
  properties: {
    id: p.string().primary(),
    userId: p.string(),
    /** The API key that paid; null for a connector's payment (grantId says which grant). */
    apiKeyId: p.string().nullable(),
    /** The OAuth grant (binding) a connector paid through, and its client; null for an API key's payment. */
    grantId: p.string().nullable(),
    clientId: p.string().nullable(),
    /** '' for the user's API keys, the grant id for a connector: the idempotency scope of `requestId`. */
    requestScope: p.string().default(''),
    requestId: p.string().nullable(),
    delegationId: p.string(),
    /** credential (mode A), route (mode B), proxy (streaming). */
    mode: p.string(),
    protocol: p.string(),
    x402Version: p.integer().nullable(),
    status: p.enum(PAYMENT_STATUSES),
    scheme: p.string(),
    network: p.string(),
    asset: p.string(),
    recipient: p.string(),
    amount: p.type(Int64Type),
    /** The amount exactly as the merchant wrote it, for the record. */
    amountRaw: p.text(),
    approxCents: p.type(Int64Type),
    feeBps: p.integer(),
    feeAmount: p.type(Int64Type),
    feeCents: p.type(Int64Type),
    capChargedCents: p.type(Int64Type),
    feeRecipient: p.string().nullable(),
    feeStatus: p.enum(FEE_STATUSES),
    resourceUrl: p.text().nullable(),
    txHash: p.string().nullable(),
    /** rpc settlement backend: the operator's transaction that collected the fee leg on chain. */
    feeTxHash: p.string().nullable(),
    failureReason: p.text().nullable(),
    /** The signed EIP-3009 authorization's nonce (0x + 64 hex); null on rows written before it was kept. */
    authNonce: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

/** The catalog: `slug` -> an upstream base URL the caller never sees, and what an agent reads to choose it. */
export const CatalogEntry = defineEntity({
  name: 'CatalogEntry',
  tableName: 'catalog_entry',
  properties: {
    slug: p.string().primary(),
    upstreamUrl: p.text(),
    name: p.string().nullable(),
    description: p.text().nullable(),
    category: p.string().nullable(),
    protocol: p.string().nullable(),
    priceHint: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});
