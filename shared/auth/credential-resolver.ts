// The one credential resolver of both processes: `Authorization` header in, a Caller (or 401) out.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { bearerChallenge } from '../oauth/metadata.js';
import { createApiKeyCredential } from './api-key-credential.js';
import type { Caller } from './caller.js';

export interface CredentialResolver {
  /** The caller the `Authorization` header names, or 401 BCK.AUTH.0001 (missing, malformed, unknown, revoked). */
  resolve(authorization: string | undefined): Promise<Caller>;
}

// RFC 6750 §2.1 bearer syntax, the scheme case-insensitively (RFC 9110 §11.1). 512 characters bound the work an
// unauthenticated header can cause (one hash) well above any token this service issues.
const BEARER = /^Bearer[ ]+(\S{1,512})[ ]*$/i;

export function createCredentialResolver(ctx: ServiceContext): CredentialResolver {
  const apiKeys = createApiKeyCredential(ctx);
  // RFC 6750 §3 / RFC 9728 §5.1: a 401 names the scheme and where the resource's metadata (and through it, the
  // authorization server a connector asks for consent) is found.
  const challenge = { 'www-authenticate': bearerChallenge(ctx.config.publicUrl) };
  const refuse = (why: string): never => {
    throw new AppError('BCK.AUTH.0001', why, {}, {}, challenge);
  };
  return {
    async resolve(authorization) {
      if (authorization === undefined || authorization === '') return refuse('missing Authorization header');
      const token = BEARER.exec(authorization)?.[1];
      if (token === undefined) return refuse('Authorization must be "Bearer <API key>"');
      // One branch per credential kind, told apart by the token's form.
      if (apiKeys.matches(token)) {
        try {
          return await apiKeys.verify(token);
        } catch (err) {
          // Every 401 leaves here with the challenge, whichever credential kind refused.
          if (err instanceof AppError && err.code === 'BCK.AUTH.0001') return refuse(err.details);
          throw err;
        }
      }
      return refuse('API key is not valid for this environment');
    },
  };
}
