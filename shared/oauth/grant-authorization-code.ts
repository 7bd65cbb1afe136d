// grant_type=authorization_code (RFC 6749 §4.1.3, PKCE RFC 7636 §4.6). The code is consumed by ONE conditional
// UPDATE (not consumed, not expired) whose affected-row count decides, in the transaction that stores the new
// refresh token: of parallel redemptions exactly one wins. Any redemption of a consumed code, the losers of such
// a race included, is a replay (the code leaked): RFC 6749 §4.1.2 says to revoke what the code gave, so the grant,
// its tokens and its delegation are revoked.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { line } from '../text.js';
import { liveGrant, revokeGrant } from './grants.js';
import { CodeVerifier, verifierMatches } from './pkce.js';
import { invalidGrant } from './protocol-error.js';
import { consumeCode, findCode } from './store/codes.js';
import { tokenAudience } from './resource.js';
import { clientRequest } from './token-request.js';
import { type TokenResponse, redeem } from './tokens.js';

const Body = z.object({
  client_id: line(200).min(1),
  code: line(200).min(1),
  redirect_uri: line(2000).min(1),
  code_verifier: CodeVerifier,
});

export async function redeemAuthorizationCode(
  ctx: ServiceContext,
  signer: TokenSigner,
  body: unknown,
): Promise<TokenResponse> {
  const req = await clientRequest(ctx, Body, body);
  const now = ctx.now();
  const codeHash = sha256Hex(req.code);
  const row = await findCode(ctx.db.em(), codeHash);
  // One description for every way a code is not good: a guesser learns nothing from the answer.
  const refused = () => invalidGrant('the authorization code is invalid, expired or already used');
  if (row === null || row.clientId !== req.client_id) throw refused();
  if (row.consumedAt != null) {
    await revokeGrant(ctx, row.grantId, 'code_replay');
    throw refused();
  }
  if (row.expiresAt.getTime() <= now.getTime()) throw refused();
  // RFC 6749 §4.1.3: the redirect URI must be the one the code was issued for.
  if (row.redirectUri !== req.redirect_uri) throw invalidGrant('redirect_uri does not match the authorization request');
  if (!verifierMatches(req.code_verifier, row.codeChallenge))
    throw invalidGrant('code_verifier does not match the code challenge');
  const audience = tokenAudience(ctx.config, body, row.audience);
  const grant = await liveGrant(ctx.db.em(), row.grantId, now);
  if (grant === null) throw invalidGrant('the grant has been revoked or has expired');
  const tokens = await redeem(ctx, signer, grant, audience, (em) => consumeCode(em, codeHash, now));
  if (tokens === undefined) {
    await revokeGrant(ctx, row.grantId, 'code_replay');
    throw refused();
  }
  return tokens;
}

/** The request body, as the API description shows it. */
export { Body as AuthorizationCodeBody };
