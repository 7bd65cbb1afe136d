// Token revocation (RFC 7009). Always 200 for a well-formed request, whether or not the token was known (§2.2:
// the answer must not tell a guesser anything). A refresh token revokes its whole grant; so does an access token
// (§2.1 allows it), after its signature is checked. A public client identifies itself with client_id; a token of
// another client is left alone.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import { TOKEN_AUDIENCES, type TokenAudience } from '../db/entities/index.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { line } from '../text.js';
import { revokeGrant } from './grants.js';
import { resourceOf } from './metadata.js';
import { findRefreshToken } from './store/refresh-tokens.js';
import { parseTokenRequest, tokenClient } from './token-request.js';
import { ACCESS_TOKEN_TYP } from './tokens.js';

const Body = z.object({
  token: line(4096).min(1),
  token_type_hint: line(64).optional(),
  client_id: line(200).min(1).optional(),
});

const GrantClaims = z.object({ grant_id: z.string(), client_id: z.string() });

async function grantOfAccessToken(ctx: ServiceContext, signer: TokenSigner, token: string, audience: TokenAudience) {
  try {
    const { payload, protectedHeader } = await signer.verify(token, resourceOf(ctx.config, audience));
    if (protectedHeader.typ !== ACCESS_TOKEN_TYP) return undefined;
    const claims = GrantClaims.safeParse(payload);
    return claims.success ? { grantId: claims.data.grant_id, clientId: claims.data.client_id } : undefined;
  } catch {
    return undefined; // not ours, for another audience, malformed, or expired: nothing to revoke
  }
}

/** The grant of an access token of either resource (the API's or the MCP endpoint's: RFC 8707 audiences). */
async function grantOfAnyAccessToken(ctx: ServiceContext, signer: TokenSigner, token: string) {
  for (const audience of TOKEN_AUDIENCES) {
    const found = await grantOfAccessToken(ctx, signer, token, audience);
    if (found !== undefined) return found;
  }
  return undefined;
}

export async function revokeToken(ctx: ServiceContext, signer: TokenSigner, body: unknown): Promise<void> {
  const req = parseTokenRequest(Body, body);
  if (req.client_id !== undefined) await tokenClient(ctx, req.client_id);
  const refresh = await findRefreshToken(ctx.db.em(), sha256Hex(req.token));
  const target =
    refresh !== null
      ? { grantId: refresh.grantId, clientId: refresh.clientId }
      : req.token.split('.').length === 3
        ? await grantOfAnyAccessToken(ctx, signer, req.token)
        : undefined;
  if (target === undefined) return;
  if (req.client_id !== undefined && req.client_id !== target.clientId) return;
  await revokeGrant(ctx, target.grantId, 'revocation_endpoint');
}

/** The request body, as the API description shows it. */
export { Body as RevocationBody };
