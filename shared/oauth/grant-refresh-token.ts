// grant_type=refresh_token (RFC 6749 §6) with rotation (OAuth 2.0 Security BCP, RFC 9700 §4.14.2): every use
// marks the token rotated by ONE conditional UPDATE and returns a new one, so of parallel refreshes of one token
// exactly one wins. A rotated token presented again was copied: the whole grant is revoked (its newest refresh
// token and its delegation included), whichever of the two holders comes back first.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { line } from '../text.js';
import { liveGrant, revokeGrant } from './grants.js';
import { invalidGrant, invalidScope } from './protocol-error.js';
import { findRefreshToken, rotateRefreshToken } from './store/refresh-tokens.js';
import { tokenAudience } from './resource.js';
import { clientRequest } from './token-request.js';
import { type TokenResponse, redeem } from './tokens.js';

const Body = z.object({
  client_id: line(200).min(1),
  refresh_token: line(200).min(1),
  scope: line(200).optional(),
});

export async function redeemRefreshToken(
  ctx: ServiceContext,
  signer: TokenSigner,
  body: unknown,
): Promise<TokenResponse> {
  const req = await clientRequest(ctx, Body, body);
  const now = ctx.now();
  const tokenHash = sha256Hex(req.refresh_token);
  const row = await findRefreshToken(ctx.db.em(), tokenHash);
  const refused = () => invalidGrant('the refresh token is invalid, expired, revoked or already used');
  if (row === null || row.clientId !== req.client_id || row.revokedAt != null) throw refused();
  if (row.rotatedAt != null) {
    await revokeGrant(ctx, row.grantId, 'refresh_reuse');
    throw refused();
  }
  if (row.expiresAt.getTime() <= now.getTime()) throw refused();
  const audience = tokenAudience(ctx.config, body, row.audience);
  const grant = await liveGrant(ctx.db.em(), row.grantId, now);
  if (grant === null) throw refused();
  // RFC 6749 §6: a refresh may narrow the scope, never widen it; a grant has exactly one consent type.
  if (req.scope !== undefined && req.scope !== grant.consentType) {
    throw invalidScope(`the grant's scope is ${grant.consentType}`);
  }
  const tokens = await redeem(ctx, signer, grant, audience, (em) => rotateRefreshToken(em, tokenHash, now));
  if (tokens === undefined) {
    // Rotated (or revoked) since it was read: a parallel use of the same token.
    await revokeGrant(ctx, row.grantId, 'refresh_reuse');
    throw refused();
  }
  return tokens;
}

/** The request body, as the API description shows it. */
export { Body as RefreshTokenBody };
