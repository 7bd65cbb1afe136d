import { getAddress, isAddress } from 'viem';
import { z } from 'zod';

/** An EVM address in any case; normalised to its EIP-55 checksum form, the form stored everywhere. */
export const EvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .refine((v) => isAddress(v, { strict: false }), 'must be an EVM address')
  .transform((v) => getAddress(v));

export const normalizeAddress = (v: string): string | undefined => {
  const r = EvmAddress.safeParse(v);
  return r.success ? r.data : undefined;
};
