// Wire shapes of the x402 objects of the interface ("x402 objects"), as zod schemas with inferred types of
// the same name (coinbase/x402 core/src/schemas habit). Bounded everywhere, strings built on text.ts (no control
// characters, no unpaired surrogates): these arrive from strangers.
import { z } from 'zod';
import { EvmAddress } from '../address.js';
import { line, text } from '../text.js';

export const PERMISSION_SCHEMES = ['svc:erc4337', 'svc:card-delegation'] as const;
export type PermissionScheme = (typeof PERMISSION_SCHEMES)[number];

export const Network = z.string().regex(/^eip155:[1-9][0-9]{0,11}$/, 'must be eip155:<chain id>');
export const PlanIdString = z.string().regex(/^[1-9][0-9]{0,9}$/, 'must be a decimal plan id');

export const Resource = z.looseObject({
  url: line(2048).min(1),
  description: text(5000).optional(),
});
export type Resource = z.infer<typeof Resource>;

export const Accepted = z.looseObject({
  scheme: line(64).min(1),
  network: Network,
  planId: PlanIdString,
  extra: z
    .looseObject({
      agentId: line(200).min(1).optional(),
      httpVerb: line(10).min(1).optional(),
      version: line(20).optional(),
    })
    .optional(),
});
export type Accepted = z.infer<typeof Accepted>;

export const Extensions = z.record(line(200), z.unknown());

export const PaymentRequired = z.looseObject({
  x402Version: z.number().int().min(1).max(10),
  error: text(5000).optional(),
  resource: Resource.optional(),
  accepts: z.array(Accepted).min(1).max(64),
  extensions: Extensions.optional(),
});
export type PaymentRequired = z.infer<typeof PaymentRequired>;

const Hex = (bytes: number) =>
  z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`), `must be ${bytes} bytes of hex`);

export const PermissionToken = z.object({
  x402Version: z.literal(2),
  resource: Resource,
  accepted: Accepted,
  payload: z.object({
    signature: Hex(65),
    authorization: z.object({
      from: EvmAddress,
      sessionKeysProvider: line(200).min(1),
      sessionKeys: z.array(line(200)).max(10),
      /** Our addition: the random nonce that makes each permission's typed-data hash unique. */
      nonce: Hex(32),
    }),
  }),
  extensions: Extensions.optional(),
});
export type PermissionToken = z.infer<typeof PermissionToken>;
