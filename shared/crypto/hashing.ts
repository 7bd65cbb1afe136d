import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One-shot digest (crypto.hash, Node >= 21.7): no Hash object per call, on every authenticated request. */
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex');

/** Constant-time comparison of two secrets (hash both so lengths never leak through timing). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
