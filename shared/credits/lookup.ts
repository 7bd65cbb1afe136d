// Plans and agents as the credit services see them (read through the registry's store).
//
// Visibility: a listed object, or one of the caller's own. For plans one more case: a holder of the
// plan's credits still sees an unlisted plan, because "subscribers keep spending credits they hold" (interface,
// listing-flag table) and spending needs an access token for the plan.
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import type { ActingUser } from '../auth/caller.js';
import { isAttached } from '../registry/store/agent-plans.js';
import { agentById } from '../registry/store/agents.js';
import { planById } from '../registry/store/plans.js';
import { hasHeldCredits } from './store/lots.js';
import { planIdOf } from './requests.js';

export interface PlanRow {
  readonly id: number;
  readonly ownerId: string;
  readonly tokenAddress: string;
  readonly amounts: string[];
  readonly receivers: string[];
  readonly creditsAmount: bigint;
  readonly creditsMinAmount: bigint;
  readonly listed: boolean;
}

export interface AgentRow {
  readonly id: string;
  readonly ownerId: string;
  readonly endpoints: Record<string, string>[];
  readonly listed: boolean;
}

const planNotFound = (raw: string | number): AppError =>
  new AppError('BCK.PROTOCOL.0003', {
    details: `plan ${String(raw).slice(0, 100)} not found`,
    params: {
      planId: String(raw).slice(0, 100),
    },
  });

const agentNotFound = (agentId: string): AppError =>
  new AppError('BCK.PROTOCOL.0004', {
    details: `agent ${agentId.slice(0, 200)} not found`,
    params: { agentId: agentId.slice(0, 200) },
  });

/** Any existing plan, listed or not; 404 BCK.PROTOCOL.0003 otherwise. */
export async function planOr404(em: Em, raw: string | number): Promise<PlanRow> {
  const id = planIdOf(raw);
  const r = id === undefined ? null : await planById(em, id);
  if (r === null) throw planNotFound(raw);
  return {
    id: r.id,
    ownerId: r.ownerId,
    tokenAddress: r.tokenAddress,
    amounts: r.amounts,
    receivers: r.receivers,
    creditsAmount: r.creditsAmount,
    creditsMinAmount: r.creditsMinAmount,
    listed: r.listed,
  };
}

/** A plan the caller may see: listed, own, or one whose credits the caller holds or held. */
export async function visiblePlanOr404(em: Em, raw: string | number, caller: ActingUser): Promise<PlanRow> {
  const plan = await planOr404(em, raw);
  if (plan.listed || plan.ownerId === caller.userId) return plan;
  if (await hasHeldCredits(em, plan.id, caller.walletAddress)) return plan;
  throw planNotFound(raw);
}

/** A plan the caller owns; anyone else gets 403 BCK.PROTOCOL.0010 (the interface's minting rule). */
export async function ownedPlanOr403(em: Em, raw: string | number, caller: ActingUser): Promise<PlanRow> {
  const plan = await planOr404(em, raw);
  if (plan.ownerId !== caller.userId) {
    throw new AppError('BCK.PROTOCOL.0010', {
      details: `only the owner of plan ${plan.id} may mint its credits`,
      params: {
        planId: String(plan.id),
      },
    });
  }
  return plan;
}

/** An agent the caller may see: listed or own. */
export async function visibleAgentOr404(em: Em, agentId: string, caller: ActingUser): Promise<AgentRow> {
  const agent = await agentById(em, agentId);
  if (agent === null || (!agent.listed && agent.ownerId !== caller.userId)) throw agentNotFound(agentId);
  return agent;
}

/** An agent the caller owns; another user's agent is a 404, as if it did not exist. */
export async function ownedAgentOr404(em: Em, agentId: string, caller: ActingUser): Promise<AgentRow> {
  const agent = await agentById(em, agentId);
  if (agent === null || agent.ownerId !== caller.userId) throw agentNotFound(agentId);
  return agent;
}

/** 404 BCK.PROTOCOL.0040 when the plan is not attached to the agent: the plan gives no access to it. */
export async function assertAttached(em: Em, planId: number, agentId: string): Promise<void> {
  if (!(await isAttached(em, planId, agentId))) {
    throw new AppError('BCK.PROTOCOL.0040', {
      details: `plan ${planId} is not attached to agent ${agentId.slice(0, 200)}`,
      params: {
        planId: String(planId),
        agentId: agentId.slice(0, 200),
      },
    });
  }
}
