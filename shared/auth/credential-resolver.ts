// The one credential resolver of both processes: `Authorization` header in, a Caller (or 401) out.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { type TokenSigner, createTokenSigner } from '../keys/signing-keys.js';
import type { TokenAudience } from '../db/entities/index.js';
import { bearerChallenge, invalidTokenChallenge } from '../oauth/metadata.js';
import { createApiKeyCredential } from './api-key-credential.js';
import type { Caller } from './caller.js';
import { createOAuthCredential } from './oauth-credential.js';

export interface CredentialResolver {
  /**
   * The caller the `Authorization` header names, or 401 BCK.AUTH.0001 (missing, malformed, unknown, revoked). The
   * API (`audience` api, the default) takes API keys and tokens issued for `{host_url}/api/v1`; the MCP endpoint
   * (`mcp`) takes only OAuth access tokens issued for `{host_url}/mcp` (RFC 8707).
   */
  resolve(authorization: string | undefined, audience?: TokenAudience): Promise<Caller>;
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
  const publicUrl = ctx.config.publicUrl;
  // RFC 6750 §3 / RFC 9728 §5.1: a 401 names the scheme and where the resource's metadata (and through it, the
  // authorization server a connector asks for consent) is found: the API's, or the MCP endpoint's.
  const refuse = (audience: TokenAudience, why: string): never => {
    throw new AppError('BCK.AUTH.0001', {
      details: why,
      headers: { 'www-authenticate': bearerChallenge(publicUrl, audience) },
    });
  };
  // RFC 6750 §3.1: a presented access token that is expired, revoked or not ours is `invalid_token`, so the
  // connector knows to refresh (or to ask the user again) rather than to look for a credential.
  const invalidToken = (audience: TokenAudience, why: string): never => {
    throw new AppError('BCK.AUTH.0001', {
      details: why,
      headers: {
        'www-authenticate': invalidTokenChallenge(publicUrl, audience),
      },
    });
  };
  return {
    async resolve(authorization, audience = 'api') {
      if (authorization === undefined || authorization === '') return refuse(audience, 'missing Authorization header');
      const token = BEARER.exec(authorization)?.[1];
      if (token === undefined) {
        return refuse(
          audience,
          audience === 'api'
            ? 'Authorization must be "Bearer <API key>"'
            : 'Authorization must be "Bearer <access token>"',
        );
      }
      // One branch per credential kind, told apart by the token's form. The MCP endpoint takes no API key: its
      // tools pay from an OAuth grant's delegation, which the human capped in the browser.
      if (apiKeys.matches(token)) {
        if (audience === 'mcp')
          return invalidToken(audience, 'the MCP endpoint takes an OAuth access token, not an API key');
        try {
          return await apiKeys.verify(token);
        } catch (err) {
          // Every 401 leaves here with the challenge, whichever credential kind refused.
          if (err instanceof AppError && err.code === 'BCK.AUTH.0001') return refuse(audience, err.details);
          throw err;
        }
      }
      if (oauth.matches(token)) {
        try {
          return await oauth.verify(token, audience);
        } catch (err) {
          if (err instanceof AppError && err.code === 'BCK.AUTH.0001') return invalidToken(audience, err.details);
          throw err;
        }
      }
      return refuse(
        audience,
        audience === 'api' ? 'API key is not valid for this environment' : 'not an access token of this service',
      );
    },
  };
}
