// Request schemas of the credit and access-token endpoints: every body and path parameter is parsed here, once, before a
// service sees it. Types are inferred from the schemas and share their names (x402 core's habit). Strings are
// text.ts's: bounded, and a control character or an unpaired surrogate is a 400 naming the field.
//
// Unknown body fields are ignored rather than refused: the interface leaves the full bodies of initialize,
// sub-task tracking and mint-expirable unspecified, so clients written against the hosted service may send more.
import { z } from 'zod';
import { EvmAddress } from '../address.js';
import { PositiveAmount } from '../money.js';
import { line, text } from '../text.js';

/** Largest plan id: plan.id is a 32-bit serial on both databases. */
export const MAX_PLAN_ID = 2_147_483_647;

/** Longest JWT accepted (access tokens and proofs are ~600 bytes; the cap bounds the work on hostile input). */
export const MAX_JWT_CHARS = 4096;

/** Ten years: a longer expiry is a typo, and keeps `now + durationSecs` a valid date on every database. */
export const MAX_DURATION_SECS = 10 * 366 * 86_400;

/** Sub-task tags become part of the burn key (`subtask:<tag>`, a 255-character column). */
export const MAX_TAG_CHARS = 200;

/**
 * A plan id as a path parameter or a body field (the interface: an integer in paths, a string in bodies, "a
 * decimal numeric string or an identifier string"). Anything that is not a decimal id in range names no plan
 * here: it resolves to `undefined`, which the services turn into 404 BCK.PROTOCOL.0003.
 */
export function planIdOf(raw: string | number): number | undefined {
  const s = typeof raw === 'number' ? (Number.isSafeInteger(raw) ? String(raw) : '') : raw;
  if (!/^[1-9][0-9]{0,9}$/.test(s)) return undefined;
  const n = Number(s);
  return n <= MAX_PLAN_ID ? n : undefined;
}

/** A body planId: a string (the interface's type) or a JSON integer; resolved with planIdOf. */
export const BodyPlanId = z.union([line(100).min(1), z.number().int()]);

const Jwt = line(MAX_JWT_CHARS).min(1);

export const MintBody = z.object({
  planId: BodyPlanId,
  holderAddress: EvmAddress,
  amount: PositiveAmount,
});
export type MintBody = z.output<typeof MintBody>;

export const MintExpirableBody = MintBody.extend({
  durationSecs: z.number().int().positive().max(MAX_DURATION_SECS),
});
export type MintExpirableBody = z.output<typeof MintExpirableBody>;

export const RedeemBody = z.object({
  planId: BodyPlanId,
  holderAddress: EvmAddress,
  amount: PositiveAmount,
  proof: Jwt,
});
export type RedeemBody = z.output<typeof RedeemBody>;

export const SubTaskBody = z.object({
  agentRequestId: line(100).min(1),
  creditsToRedeem: PositiveAmount,
  tag: line(MAX_TAG_CHARS).min(1).optional(),
  description: text(10_000).optional(),
  status: line(64).min(1).optional(),
});
export type SubTaskBody = z.output<typeof SubTaskBody>;

export const HTTP_VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export const InitializeBody = z.object({
  accessToken: Jwt,
  endpoint: line(2048).min(1),
  httpVerb: line(16)
    .transform((v) => v.toUpperCase())
    .pipe(z.enum(HTTP_VERBS)),
  maxCredits: PositiveAmount.optional(),
});
export type InitializeBody = z.output<typeof InitializeBody>;

/** `holderAddress` path parameter: any case in, EIP-55 out; malformed is a 400. */
export const HolderParam = z.object({ holderAddress: EvmAddress });

/** `agentId` path parameter (a DID; bounded so a hostile path does not reach the database). */
export const AgentIdParam = line(200).min(1);
