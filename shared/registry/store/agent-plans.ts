// Every statement on agent_plan (which plans are attached to which agents), through the entity manager. The rows
// carry no ownership: the services check that the caller owns both sides before writing one.
import { AgentPlan } from '../../db/entities/index.js';
import type { Em } from '../../db/orm.js';

/**
 * Inserts in the caller's entity manager (or transaction). An existing pair propagates as MikroORM's
 * UniqueConstraintViolationException.
 */
export async function insertAgentPlan(
  em: Em,
  row: { agentId: string; planId: number; createdAt: Date },
): Promise<void> {
  await em.insert(AgentPlan, row);
}

/** Detaches; the number of rows removed (0: the pair was not attached). */
export const deleteAgentPlan = (em: Em, agentId: string, planId: number): Promise<number> =>
  em.nativeDelete(AgentPlan, { agentId, planId });

export const isAttached = async (em: Em, planId: number, agentId: string): Promise<boolean> =>
  (await em.count(AgentPlan, { planId, agentId })) !== 0;

export async function planIdsOfAgent(em: Em, agentId: string): Promise<number[]> {
  const links = await em.find(AgentPlan, { agentId }, { fields: ['planId'] });
  return links.map((l) => l.planId);
}

export async function agentIdsOfPlan(em: Em, planId: number): Promise<string[]> {
  const links = await em.find(AgentPlan, { planId }, { fields: ['agentId'] });
  return links.map((l) => l.agentId);
}
