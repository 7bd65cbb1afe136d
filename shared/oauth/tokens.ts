// What the token endpoint hands out for a live grant: an access token (an ES256 JWT, RFC 9068, signed with the
// service's keys and verifiable against its JWKS) and a new refresh token (opaque, stored hashed, rotated on use).
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import type { TokenAudience } from '../db/entities/index.js';
import type { Em } from '../db/sql.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import type { GrantRow, LiveGrant } from './grants.js';
import { resourceOf } from './metadata.js';
import { addRefreshToken } from './store/refresh-tokens.js';

/** RFC 9068 §2.1: the `typ` of a JWT access token, so it cannot be mistaken for another kind of JWT. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

/**
 * Signs an access token for the grant (RFC 9068 §2.2 claims, plus the grant and its delegation), for the resource
 * it was authorized for: `aud` is that resource's identifier (RFC 8707 §2), which each resource server checks.
 */
export async function signAccessToken(
  ctx: ServiceContext,
  signer: TokenSigner,
  grant: GrantRow,
  audience: TokenAudience,
): Promise<string> {
  return signer.sign(
    {
      client_id: grant.clientId,
      scope: grant.consentType,
      grant_id: grant.id,
      delegation_id: grant.delegationId,
    },
    {
      subject: grant.userId,
      audience: resourceOf(ctx.config, audience),
      ttlSecs: ctx.config.OAUTH_ACCESS_TOKEN_TTL_SECS,
      typ: ACCESS_TOKEN_TYP,
    },
  );
}

/**
 * Adds a new refresh token of the grant to `em`'s unit of work, living as long as the grant, for the audience it
 * was authorized for (a rotation keeps it: RFC 8707 §2.2 lets a refresh narrow the resources, never widen them);
 * the caller flushes.
 */
export function newRefreshToken(em: Em, grant: LiveGrant, audience: TokenAudience, now: Date): string {
  const token = randomToken(32);
  addRefreshToken(em, {
    tokenHash: sha256Hex(token),
    grantId: grant.id,
    clientId: grant.clientId,
    audience,
    expiresAt: grant.expiresAt,
    createdAt: now,
  });
  return token;
}

export const tokenResponse = (
  ctx: ServiceContext,
  grant: GrantRow,
  accessToken: string,
  refreshToken: string,
): TokenResponse => ({
  access_token: accessToken,
  token_type: 'Bearer',
  expires_in: ctx.config.OAUTH_ACCESS_TOKEN_TTL_SECS,
  refresh_token: refreshToken,
  scope: grant.consentType,
});

/**
 * Redeems `grant` for `audience`: signs the access token, then, in ONE transaction, consumes what it is redeemed with (`consume`:
 * a conditional UPDATE returning its affected-row count) and stores the new refresh token. Undefined when the
 * consume changed nothing: a parallel redemption won, and this one is a replay.
 */
export async function redeem(
  ctx: ServiceContext,
  signer: TokenSigner,
  grant: LiveGrant,
  audience: TokenAudience,
  consume: (em: Em) => Promise<number>,
): Promise<TokenResponse | undefined> {
  const accessToken = await signAccessToken(ctx, signer, grant, audience);
  const now = ctx.now();
  const refreshToken = await ctx.db.em().transactional(async (em) => {
    if ((await consume(em)) !== 1) return undefined;
    const token = newRefreshToken(em, grant, audience, now);
    await em.flush();
    return token;
  });
  return refreshToken === undefined ? undefined : tokenResponse(ctx, grant, accessToken, refreshToken);
}
