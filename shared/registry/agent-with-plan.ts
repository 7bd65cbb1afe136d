// POST /protocol/agents/plans: an agent and a plan created and attached in one transaction, so a failure leaves
// neither behind.
import type { ServiceContext } from '../context.js';
import { insertAgent } from './agents.js';
import { insertPlan } from './plans.js';
import { type AgentRecord, type PlanRecord, agentRecord, planRecord } from './records.js';
import type { AgentWithPlanInput } from './requests.js';
import { insertAgentPlan } from './store/agent-plans.js';

export interface AgentWithPlan {
  agentId: string;
  planId: string;
  agent: AgentRecord;
  plan: PlanRecord;
}

export async function createAgentWithPlan(
  ctx: ServiceContext,
  ownerId: string,
  input: AgentWithPlanInput,
): Promise<AgentWithPlan> {
  const now = ctx.now();
  // The first statement is a write (the plan insert): on SQLite that takes the write lock at once, so a
  // concurrent writer in another process waits on busy_timeout instead of failing a read-to-write upgrade.
  const { agent, plan } = await ctx.db.em().transactional(async (tx) => {
    const plan = await insertPlan(
      tx,
      ownerId,
      {
        name: input.planMetadata.name,
        description: input.planMetadata.description,
        priceConfig: input.priceConfig,
        creditsConfig: input.creditsConfig,
        accessLimit: input.accessLimit,
      },
      now,
    );
    const agent = await insertAgent(
      tx,
      ctx.config.ENVIRONMENT,
      ownerId,
      { ...input.agentMetadata, ...input.agentApi },
      now,
    );
    await insertAgentPlan(tx, { agentId: agent.id, planId: plan.id, createdAt: now });
    return { agent, plan };
  });
  return {
    agentId: agent.id,
    planId: String(plan.id),
    agent: agentRecord(agent, ownerId),
    plan: planRecord(plan, ownerId),
  };
}
