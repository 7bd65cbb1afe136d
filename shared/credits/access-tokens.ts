// Access tokens and agent-request initialization.
//
//   GET  /protocol/token/{planId}/{agentId}        the subscriber asks for a token for (plan, agent)
//   POST /protocol/agents/initialize/{agentId}     the agent's owner presents it before serving a call
//
// Initialize does not reserve credits: it checks that the balance covers `maxCredits` now, and the redeem that
// follows checks again in its own transaction.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { toWire } from '../money.js';
import type { ActingUser } from '../auth/caller.js';
import { endpointMatches } from './endpoint-match.js';
import { insertAgentRequest } from './store/agent-requests.js';
import { creditBalance } from './store/lots.js';
import { assertAttached, ownedAgentOr404, planOr404, visibleAgentOr404, visiblePlanOr404 } from './lookup.js';
import { issueAccessToken, issueProof, verifyAccessToken } from './tokens.js';
import type { InitializeBody } from './requests.js';

export interface AccessTokenResult {
  accessToken: string;
  planId: string;
  agentId: string;
  holderAddress: string;
  expiresAt: string;
}

const insufficient = (planId: number, holder: string, balance: bigint, needed: bigint): AppError =>
  new AppError('BCK.CREDITS.0003', {
    details: `${holder} holds ${balance} credits of plan ${planId}; ${needed} needed`,
    params: {
      planId: String(planId),
      holderAddress: holder,
      balance: toWire(balance),
      required: toWire(needed),
    },
  });

/** A token for the caller's wallet; 404 for an unknown/invisible plan or agent (0003/0004) or an unattached pair (0040), 402 without credits. */
export async function accessToken(
  ctx: ServiceContext,
  signer: TokenSigner,
  caller: ActingUser,
  rawPlanId: string,
  agentId: string,
): Promise<AccessTokenResult> {
  const em = ctx.db.em();
  const plan = await visiblePlanOr404(em, rawPlanId, caller);
  const agent = await visibleAgentOr404(em, agentId, caller);
  await assertAttached(em, plan.id, agent.id);
  const holder = caller.walletAddress;
  const balance = await creditBalance(em, plan.id, holder, ctx.now());
  if (balance <= 0n) throw insufficient(plan.id, holder, balance, 1n);
  const { accessToken: token, expiresAt } = await issueAccessToken(ctx, signer, {
    planId: plan.id,
    agentId: agent.id,
    holder,
  });
  return {
    accessToken: token,
    planId: String(plan.id),
    agentId: agent.id,
    holderAddress: holder,
    expiresAt: expiresAt.toISOString(),
  };
}

export interface InitializeResult {
  agentRequestId: string;
  proof: string;
  balance: string;
  maxCredits: string;
}

/**
 * Called by the agent's owner (anyone else: 404, as if the agent did not exist) with the subscriber's access
 * token and the endpoint being served. `maxCredits` defaults to the plan's `creditsConfig.minAmount` (at least 1).
 */
export async function initializeAgentRequest(
  ctx: ServiceContext,
  signer: TokenSigner,
  caller: ActingUser,
  agentId: string,
  input: InitializeBody,
): Promise<InitializeResult> {
  const em = ctx.db.em();
  const agent = await ownedAgentOr404(em, agentId, caller);
  const claims = await verifyAccessToken(signer, input.accessToken);
  if (claims.agentId !== agent.id) {
    throw new AppError('BCK.PROTOCOL.0021', {
      details: `the access token was issued for another agent`,
      params: { agentId: agent.id },
    });
  }
  const plan = await planOr404(em, claims.planId);
  // Detaching a plan from an agent ends the access its tokens gave.
  await assertAttached(em, plan.id, agent.id);
  if (!endpointMatches(agent.endpoints, input.httpVerb, input.endpoint)) {
    throw new AppError('BCK.PROTOCOL.0020', {
      details: `${input.httpVerb} ${input.endpoint.slice(0, 300)} is not an endpoint of agent ${agent.id}`,
      params: {
        httpVerb: input.httpVerb,
        endpoint: input.endpoint.slice(0, 300),
      },
    });
  }
  const holder = claims.holder;
  const maxCredits = input.maxCredits ?? (plan.creditsMinAmount > 0n ? plan.creditsMinAmount : 1n);
  const now = ctx.now();
  const balance = await creditBalance(em, plan.id, holder, now);
  if (balance < maxCredits) throw insufficient(plan.id, holder, balance, maxCredits);
  const agentRequestId = randomUUID();
  await insertAgentRequest(
    em,
    { id: agentRequestId, planId: plan.id, agentId: agent.id, holderAddress: holder, maxCredits },
    now,
  );
  const proof = await issueProof(ctx, signer, {
    planId: plan.id,
    holder,
    agentId: agent.id,
    agentRequestId,
    maxCredits,
  });
  return { agentRequestId, proof, balance: toWire(balance), maxCredits: toWire(maxCredits) };
}
