// The one credential resolver of both processes: `Authorization` header in, a Caller (or 401) out.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { type TokenSigner, createTokenSigner } from '../keys/signing-keys.js';
import { bearerChallenge, resourceMetadataUrl } from '../oauth/metadata.js';
import { createApiKeyCredential } from './api-key-credential.js';
import type { Caller } from './caller.js';
import { createOAuthCredential } from './oauth-credential.js';

export interface CredentialResolver {
  /** The caller the `Authorization` header names, or 401 BCK.AUTH.0001 (missing, malformed, unknown, revoked). */
  resolve(authorization: string | undefined): Promise<Caller>;
}

// RFC 6750 §2.1 bearer syntax, the scheme case-insensitively (RFC 9110 §11.1). 2048 characters bound the work an
// unauthenticated header can cause (one hash, or one JWT parse) well above any token this service issues (an API
// key is about 50 characters, an OAuth access token about 700).
const BEARER = /^Bearer[ ]+(\S{1,2048})[ ]*$/i;

export function createCredentialResolver(
  ctx: ServiceContext,
  signer: TokenSigner = createTokenSigner(ctx),
): CredentialResolver {
  const apiKeys = createApiKeyCredential(ctx);
  const oauth = createOAuthCredential(ctx, signer);
  // RFC 6750 §3 / RFC 9728 §5.1: a 401 names the scheme and where the resource's metadata (and through it, the
  // authorization server a connector asks for consent) is found.
  const challenge = { 'www-authenticate': bearerChallenge(ctx.config.publicUrl) };
  const refuse = (why: string): never => {
    throw new AppError('BCK.AUTH.0001', { details: why, headers: challenge });
  };
  // RFC 6750 §3.1: a presented access token that is expired, revoked or not ours is `invalid_token`, so the
  // connector knows to refresh (or to ask the user again) rather than to look for a credential.
  const invalidToken = {
    'www-authenticate': `Bearer error="invalid_token", resource_metadata="${resourceMetadataUrl(ctx.config.publicUrl)}"`,
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
      if (oauth.matches(token)) {
        try {
          return await oauth.verify(token);
        } catch (err) {
          if (err instanceof AppError && err.code === 'BCK.AUTH.0001') {
            throw new AppError('BCK.AUTH.0001', { details: err.details, headers: invalidToken });
          }
          throw err;
        }
      }
      return refuse('API key is not valid for this environment');
    },
  };
}
