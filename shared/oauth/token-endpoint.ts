// The token endpoint (RFC 6749 §3.2): one grant type per file, chosen by `grant_type`.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { countedTokenRequest } from './token-metrics.js';
import { line } from '../text.js';
import { redeemAuthorizationCode } from './grant-authorization-code.js';
import { redeemDeviceCode } from './grant-device-code.js';
import { redeemRefreshToken } from './grant-refresh-token.js';
import { DEVICE_CODE_GRANT } from './metadata.js';
import { unsupportedGrantType } from './protocol-error.js';
import { parseTokenRequest } from './token-request.js';
import type { TokenResponse } from './tokens.js';

const GRANTS: Readonly<
  Record<string, (ctx: ServiceContext, signer: TokenSigner, body: unknown) => Promise<TokenResponse>>
> = {
  authorization_code: redeemAuthorizationCode,
  refresh_token: redeemRefreshToken,
  [DEVICE_CODE_GRANT]: redeemDeviceCode,
};
const GRANT_BY_TYPE = new Map(Object.entries(GRANTS));

const GrantType = z.object({ grant_type: line(200).min(1) });

export function tokenRequest(ctx: ServiceContext, signer: TokenSigner, body: unknown): Promise<TokenResponse> {
  return countedTokenRequest(body, () => answer(ctx, signer, body));
}

async function answer(ctx: ServiceContext, signer: TokenSigner, body: unknown): Promise<TokenResponse> {
  const { grant_type } = parseTokenRequest(GrantType, body);
  const grant = GRANT_BY_TYPE.get(grant_type);
  if (grant === undefined) throw unsupportedGrantType(`grant_type ${grant_type} is not supported`);
  return grant(ctx, signer, body);
}
