// Access tokens and redeem proofs: ES256 JWTs signed by the service. The audience keeps the two
// kinds apart, so a proof can never be replayed as an access token or the other way round.
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { EvmAddress } from '../address.js';
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { Amount } from '../money.js';

export const ACCESS_AUDIENCE = 'payroute:access';
export const PROOF_AUDIENCE = 'payroute:proof';

const PlanIdClaim = z.string().regex(/^[1-9][0-9]{0,9}$/);

/** Claims of an access token: the holder may use `agentId` under `planId`. `sub` is the holder too. */
export const AccessClaims = z.object({
  planId: PlanIdClaim,
  agentId: z.string().min(1).max(200),
  holder: EvmAddress,
  sub: EvmAddress,
  exp: z.number().int(),
});
export type AccessClaims = z.output<typeof AccessClaims>;

/** Claims of a proof: what one initialized agent request may burn, for whom. */
export const ProofClaims = z.object({
  planId: PlanIdClaim,
  holder: EvmAddress,
  agentId: z.string().min(1).max(200),
  agentRequestId: z.uuid(),
  maxCredits: Amount,
});
export type ProofClaims = z.output<typeof ProofClaims>;

/** Parses verified claims; a payload that does not have the expected shape is an invalid token. */
export function parseAccessClaims(payload: unknown): AccessClaims | undefined {
  const r = AccessClaims.safeParse(payload);
  return r.success && r.data.sub === r.data.holder ? r.data : undefined;
}

export function parseProofClaims(payload: unknown): ProofClaims | undefined {
  const r = ProofClaims.safeParse(payload);
  return r.success ? r.data : undefined;
}

export async function issueAccessToken(
  ctx: ServiceContext,
  signer: TokenSigner,
  claims: { planId: number; agentId: string; holder: string },
): Promise<{ accessToken: string; expiresAt: Date }> {
  const accessToken = await signer.sign(
    { planId: String(claims.planId), agentId: claims.agentId, holder: claims.holder },
    { audience: ACCESS_AUDIENCE, subject: claims.holder, ttlSecs: ctx.config.ACCESS_TOKEN_TTL_SECS },
  );
  const exp = decodeJwt(accessToken).exp ?? 0;
  return { accessToken, expiresAt: new Date(exp * 1000) };
}

/** Verifies an access token; anything wrong (signature, expiry, audience, issuer, shape) is 401 BCK.PROTOCOL.0021. */
export async function verifyAccessToken(signer: TokenSigner, token: string): Promise<AccessClaims> {
  let payload: unknown;
  try {
    payload = (await signer.verify(token, ACCESS_AUDIENCE)).payload;
  } catch {
    throw new AppError('BCK.PROTOCOL.0021', {
      details: 'the access token is malformed, expired or not signed by this service',
    });
  }
  const claims = parseAccessClaims(payload);
  if (claims === undefined)
    throw new AppError('BCK.PROTOCOL.0021', { details: 'the access token does not carry plan, agent and holder' });
  return claims;
}

export async function issueProof(
  ctx: ServiceContext,
  signer: TokenSigner,
  claims: { planId: number; holder: string; agentId: string; agentRequestId: string; maxCredits: bigint },
): Promise<string> {
  return signer.sign(
    {
      planId: String(claims.planId),
      holder: claims.holder,
      agentId: claims.agentId,
      agentRequestId: claims.agentRequestId,
      maxCredits: claims.maxCredits.toString(10),
    },
    { audience: PROOF_AUDIENCE, ttlSecs: ctx.config.PROOF_TTL_SECS },
  );
}

/** Verifies a proof; anything wrong is 400 BCK.PROTOCOL.0022. */
export async function verifyProof(signer: TokenSigner, token: string): Promise<ProofClaims> {
  let payload: unknown;
  try {
    payload = (await signer.verify(token, PROOF_AUDIENCE)).payload;
  } catch {
    throw new AppError('BCK.PROTOCOL.0022', {
      details: 'the proof is malformed, expired or not signed by this service',
    });
  }
  const claims = parseProofClaims(payload);
  if (claims === undefined)
    throw new AppError('BCK.PROTOCOL.0022', { details: 'the proof does not carry the request claims' });
  return claims;
}
