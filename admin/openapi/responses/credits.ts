// What the credit and access endpoints answer (shared/credits: mint, burn, order, balance, access).
import { z } from 'zod';
import type { AccessTokenResult, InitializeResult } from '../../../shared/credits/access-tokens.js';
import type { BalanceResult as BalanceResultType } from '../../../shared/credits/balance.js';
import type { BurnResult as BurnResultType } from '../../../shared/credits/burn.js';
import type { MintResult as MintResultType } from '../../../shared/credits/mint.js';
import type { OrderResult as OrderResultType } from '../../../shared/credits/order-result.js';
import { Address, Decimal, type Fits, Timestamp, named } from './common.js';

const PlanId = z.string().regex(/^[1-9][0-9]*$/);

export const MintResult = named(
  'MintResult',
  z.object({
    success: z.literal(true),
    planId: PlanId,
    holderAddress: Address,
    amount: Decimal,
    balance: Decimal,
    /** Expirable credits only: when this lot stops counting. */
    expiresAt: Timestamp.optional(),
  }),
  "Credits minted to the holder, and the holder's balance after.",
);

export const BurnResult = named(
  'BurnResult',
  z.object({
    success: z.literal(true),
    agentRequestId: z.string(),
    creditsRedeemed: Decimal,
    balance: Decimal,
    /** Sub-tasks only: this sub-task was recorded before, and nothing was burnt now. */
    duplicate: z.literal(true).optional(),
  }),
  'Credits burnt for an agent request (once per request, or per sub-task tag).',
);

export const OrderResult = named(
  'OrderResult',
  z.object({
    orderId: z.string(),
    planId: PlanId,
    holderAddress: Address,
    creditsGranted: Decimal,
    /** Atomic units of the plan's token; cents when a connector's card paid. */
    amountPaid: Decimal,
    /** The token's address, or `fiat:<currency>` for a card. */
    asset: z.string(),
    /** The settlement of the payment; null for a free plan. */
    txId: z.string().nullable(),
    balance: Decimal,
  }),
  'A plan bought: what was paid, the credits granted and the balance after.',
);

export const BalanceResult = named(
  'BalanceResult',
  z.object({ planId: PlanId, holderAddress: Address, balance: Decimal, isSubscriber: z.boolean() }),
  "A holder's unexpired credits of a plan.",
);

export const AccessToken = named(
  'AccessToken',
  z.object({
    accessToken: z.string(),
    planId: PlanId,
    agentId: z.string(),
    holderAddress: Address,
    expiresAt: Timestamp,
  }),
  'A token the subscriber sends to the agent; the agent initializes its request with it.',
);

export const InitializedRequest = named(
  'InitializedRequest',
  z.object({ agentRequestId: z.string(), proof: z.string(), balance: Decimal, maxCredits: Decimal }),
  'An agent request: the proof that lets the agent burn at most `maxCredits` for it.',
);

export type MintResultFits = Fits<typeof MintResult, MintResultType>;
export type BurnResultFits = Fits<typeof BurnResult, BurnResultType>;
export type OrderResultFits = Fits<typeof OrderResult, OrderResultType>;
export type BalanceResultFits = Fits<typeof BalanceResult, BalanceResultType>;
export type AccessTokenFits = Fits<typeof AccessToken, AccessTokenResult>;
export type InitializedRequestFits = Fits<typeof InitializedRequest, InitializeResult>;
