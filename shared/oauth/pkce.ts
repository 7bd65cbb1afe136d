// PKCE (RFC 7636) with S256 only: a public client proves at the token endpoint that it is the instance that
// started the authorization, since it has no secret.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { secretsEqual } from '../crypto/hashing.js';

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters. */
export const CodeChallenge = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, 'must be an S256 code challenge (43 base64url characters)');

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export const CodeVerifier = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{43,128}$/, 'must be 43 to 128 characters of [A-Za-z0-9._~-]');

export const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** Whether `verifier` answers `challenge` (compared in constant time). */
export const verifierMatches = (verifier: string, challenge: string): boolean =>
  secretsEqual(s256(verifier), challenge);
