// The one credential resolver of both processes: `Authorization` header in, a Caller (or 401) out.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { createApiKeyCredential } from './api-key-credential.js';
import type { Caller } from './caller.js';

export interface CredentialResolver {
  /** The caller the `Authorization` header names, or 401 BCK.AUTH.0001 (missing, malformed, unknown, revoked). */
  resolve(authorization: string | undefined): Promise<Caller>;
}

// RFC 6750 §2.1 bearer syntax, the scheme case-insensitively (RFC 9110 §11.1). 512 characters bound the work an
// unauthenticated header can cause (one hash) well above any token this service issues.
const BEARER = /^Bearer[ ]+(\S{1,512})[ ]*$/i;

function refuse(why: string): never {
  throw new AppError('BCK.AUTH.0001', why);
}

export function createCredentialResolver(ctx: ServiceContext): CredentialResolver {
  const apiKeys = createApiKeyCredential(ctx);
  return {
    async resolve(authorization) {
      if (authorization === undefined || authorization === '') return refuse('missing Authorization header');
      const token = BEARER.exec(authorization)?.[1];
      if (token === undefined) return refuse('Authorization must be "Bearer <API key>"');
      // One branch per credential kind, told apart by the token's form.
      if (apiKeys.matches(token)) return apiKeys.verify(token);
      return refuse('API key is not valid for this environment');
    },
  };
}
