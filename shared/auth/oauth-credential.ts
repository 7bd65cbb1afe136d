// OAuth access tokens as credentials: ES256 JWTs (`typ: at+jwt`, RFC 9068) signed with the service's keys. The
// signature, `typ`, `iss`, `aud` and `exp` are checked with jose against the key set (an unknown `kid`, a key
// another process just rotated in, reloads it once). A JWT cannot be recalled, so every use also checks that its
// grant and the grant's delegation are still live: cached for at most API_KEY_CACHE_MS (<= 1 s), as API keys, so
// a revoked grant stops working within a second in every process (the spend module's conditional UPDATE still
// refuses a revoked delegation at once).
import { createHash } from 'node:crypto';
import { errors } from 'jose';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { CONSENT_TYPES, type TokenAudience } from '../db/entities/index.js';
import { userById } from '../accounts/store.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { cacheLookup } from '../metrics/caches.js';
import { liveGrant } from '../oauth/grants.js';
import { resourceOf } from '../oauth/metadata.js';
import { ACCESS_TOKEN_TYP } from '../oauth/tokens.js';
import type { OAuthCaller } from './caller.js';

export interface OAuthCredential {
  /** True when `token` has the form of a JWT (three base64url parts; an API key has a colon). */
  matches(token: string): boolean;
  /** The caller the token names, or 401 BCK.AUTH.0001 (forged, expired, for another resource than `audience`, or
   *  its grant no longer live). */
  verify(token: string, audience: TokenAudience): Promise<OAuthCaller>;
}

const JWT_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const Claims = z.object({
  sub: z.string().min(1),
  client_id: z.string().min(1),
  scope: z.enum(CONSENT_TYPES),
  grant_id: z.string().min(1),
  delegation_id: z.string().min(1),
  // Every access token this service issues expires (RFC 9068 §2.2 requires exp); jwtVerify checks it has not.
  exp: z.number().int(),
});

export function createOAuthCredential(ctx: ServiceContext, signer: TokenSigner): OAuthCredential {
  const ttl = ctx.config.API_KEY_CACHE_MS;
  // Verified tokens, by their SHA-256 (as API keys are cached): the caller a token named when its signature and its
  // grant were last checked, kept at most API_KEY_CACHE_MS and never past the token's exp. A connector sends the
  // same token for many calls, and the ECDSA check costs more than the rest of a free relayed call; the grant's
  // liveness is still known to within API_KEY_CACHE_MS (<= 1 s), as it was when the grant alone was cached.
  const verified = ttl > 0 ? new LRUCache<string, OAuthCaller>({ max: 10_000, ttl }) : undefined;
  // RFC 8707: a token is for one resource, named in its `aud`, and no other resource accepts it (a token for the
  // MCP endpoint is refused on the API, and the other way round), so a token leaked by one door opens no other.
  const resources: Readonly<Record<TokenAudience, string>> = {
    api: resourceOf(ctx.config, 'api'),
    mcp: resourceOf(ctx.config, 'mcp'),
  };
  const refuse = (why: string): never => {
    throw new AppError('BCK.AUTH.0001', { details: why });
  };

  async function callerOf(claims: z.output<typeof Claims>): Promise<OAuthCaller | undefined> {
    const em = ctx.db.em();
    const grant = await liveGrant(em, claims.grant_id, ctx.now());
    // The token's claims must be the grant's own: a token naming another delegation or user is no token of it.
    if (
      grant === null ||
      grant.userId !== claims.sub ||
      grant.clientId !== claims.client_id ||
      grant.delegationId !== claims.delegation_id ||
      grant.consentType !== claims.scope
    ) {
      return undefined;
    }
    const user = await userById(em, grant.userId);
    if (user === null) return undefined;
    // The grant's consent type is the caller's kind: route declarations admit `commerce` or `account_access`.
    return {
      kind: grant.consentType,
      userId: user.id,
      walletAddress: user.walletAddress,
      clientId: grant.clientId,
      grantId: grant.id,
      delegationId: grant.delegationId,
    };
  }

  return {
    matches: (token) => JWT_FORM.test(token),
    async verify(token, audience) {
      // By resource and token: a token verified for one resource is never a hit for the other.
      const digest =
        verified === undefined ? '' : `${audience}:${createHash('sha256').update(token).digest('base64url')}`;
      const hit = cacheLookup('oauth_token', verified?.get(digest));
      if (hit !== undefined) return hit;
      let payload: unknown;
      try {
        const verified = await signer.verify(token, resources[audience]);
        if (verified.protectedHeader.typ !== ACCESS_TOKEN_TYP) return refuse('not an OAuth access token');
        payload = verified.payload;
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'aud') {
          return refuse(
            `the access token is not for ${resources[audience]} (RFC 8707: ask for one with that resource)`,
          );
        }
        return refuse('the access token is invalid or has expired');
      }
      const claims = Claims.safeParse(payload);
      if (!claims.success) return refuse('not an OAuth access token of this service');
      const caller = await callerOf(claims.data);
      if (caller === undefined) return refuse('the grant of this access token was revoked or has expired');
      const left = claims.data.exp * 1000 - ctx.now().getTime();
      if (left > 0) verified?.set(digest, caller, { ttl: Math.min(ttl, left) });
      return caller;
    },
  };
}
