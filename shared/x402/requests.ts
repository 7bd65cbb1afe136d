// Request schemas of the x402 permission endpoints: every body and query is
// parsed here, once, before a service sees it.
//
// Verify and settle are lenient about `paymentRequired.accepts[]`: a merchant's 402 may offer other schemes
// (`exact`, v1 network names) beside ours, and an option we cannot use is "no match" (isValid: false), not a
// malformed request. Only a body that is not even the right shape is a 400.
import { z } from 'zod';
import { PositiveAmount } from '../money.js';
import { line, text, wholeNumber } from '../text.js';
import { Accepted, Extensions, PERMISSION_SCHEMES, Resource } from './objects.js';
import { MAX_TOKEN_CHARS } from './permission-token.js';

/** agentRequestId is part of a unique key (255-character column); 128 is plenty for a UUID or a ULID. */
export const MAX_AGENT_REQUEST_ID_CHARS = 128;

export const PermissionHashParam = z.string().regex(/^0x[0-9a-fA-F]{64}$/);

export const CreatePermissionBody = z.object({
  resource: Resource,
  // planId: any identifier string here, so an unknown one is the interface's 404 rather than a 400.
  accepted: Accepted.extend({
    scheme: z.enum(PERMISSION_SCHEMES),
    planId: line(100).min(1),
  }),
  delegationConfig: z.object({ delegationId: line(100).min(1) }).optional(),
});
export type CreatePermissionBody = z.output<typeof CreatePermissionBody>;

export const ListPermissionsQuery = z.object({
  page: wholeNumber(1, 1_000_000).default(1),
  offset: wholeNumber(1, 100).default(10),
  scheme: z.enum(PERMISSION_SCHEMES).optional(),
});
export type ListPermissionsQuery = z.output<typeof ListPermissionsQuery>;

/** One element of `paymentRequired.accepts`, as loose as a stranger's 402 can be. */
export const OfferedOption = z.looseObject({
  scheme: line(200),
  network: line(200),
  planId: z.union([line(200), z.number()]).optional(),
  extra: z.looseObject({ agentId: line(200).optional() }).nullish(),
});
export type OfferedOption = z.output<typeof OfferedOption>;

export const OfferedPaymentRequired = z.looseObject({
  x402Version: z.number().int().min(1).max(10),
  error: text(5000).optional(),
  resource: Resource.optional(),
  accepts: z.array(OfferedOption).min(1).max(64),
  extensions: Extensions.optional(),
});
export type OfferedPaymentRequired = z.output<typeof OfferedPaymentRequired>;

export const VerifyBody = z.object({
  paymentRequired: OfferedPaymentRequired,
  // Any single-line string up to 4x the decoder's limit: what is wrong with a token is reported as isValid: false
  // (a control character, which no base64 token holds, is the 400 of every text field).
  x402AccessToken: line(MAX_TOKEN_CHARS * 4),
  maxAmount: PositiveAmount,
});
export type VerifyBody = z.output<typeof VerifyBody>;

export const SettleBody = VerifyBody.extend({
  agentRequestId: line(MAX_AGENT_REQUEST_ID_CHARS).min(1),
});
export type SettleBody = z.output<typeof SettleBody>;
