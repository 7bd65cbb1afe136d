// The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header §2: an opaque string chosen by the
// client; Stripe's form). Bounded and printable so it can be hashed, logged as absent/present and repeated in no
// error without escaping.
import { z } from 'zod';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

/** 1 to 255 printable ASCII characters (0x20-0x7e). */
export const IdempotencyKey = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII');
export type IdempotencyKey = z.output<typeof IdempotencyKey>;
