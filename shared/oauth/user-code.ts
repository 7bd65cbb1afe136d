// The user code of the device flow (RFC 8628 §6.1): 8 characters from 20 consonants (no vowels, so no words;
// no look-alikes such as 0/O or 1/I), shown as XXXX-XXXX, accepted in any case, with or without the dash.
// 20^8 ≈ 2.6e10 codes against at most a few thousand live ones, with wrong guesses limited per user (guess-limit.ts).
import { randomInt } from 'node:crypto';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;
const NORMAL = new RegExp(`^[${USER_CODE_ALPHABET}]{${LENGTH}}$`);

/** A new code in its normal form (8 letters, no dash). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** How the code is shown: XXXX-XXXX. */
export const displayUserCode = (normal: string): string => `${normal.slice(0, 4)}-${normal.slice(4)}`;

/** What a human typed, in normal form; undefined when it cannot be a user code. */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > 32) return undefined;
  const normal = typed.replace(/[\s-]/g, '').toUpperCase();
  return NORMAL.test(normal) ? normal : undefined;
}
