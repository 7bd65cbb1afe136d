// Every statement on the agent table, through the entity manager (no statement on it is a money path). Visible to a
// caller: listed, or the caller's own; the rules of who may do what stay with the services.
import type { InferEntity } from '@mikro-orm/core';
import { Agent } from '../../db/entities/index.js';
import type { Em } from '../../db/orm.js';
import { type PageRequest, type SortedPageRequest, limitOffset, orderOf } from '../pages.js';
import type { AgentRow } from '../records.js';

export type AgentEntity = InferEntity<typeof Agent>;

/** The columns an update may change; updatedAt always. */
export type AgentChanges = Partial<Omit<AgentRow, 'id' | 'ownerId' | 'createdAt'>> & { updatedAt: Date };

const visibleTo = (callerId: string) => ({ $or: [{ listed: true }, { ownerId: callerId }] });

/** Inserts in the caller's entity manager (or transaction). */
export async function insertAgentRow(em: Em, row: AgentRow): Promise<void> {
  await em.insert(Agent, row);
}

/** Any agent, listed or not. */
export const agentById = (em: Em, id: string): Promise<AgentEntity | null> => em.findOne(Agent, { id });

/** The agent if `callerId` may see it. */
export const visibleAgentById = (em: Em, callerId: string, id: string): Promise<AgentEntity | null> =>
  em.findOne(Agent, { id, ...visibleTo(callerId) });

export const ownsAgent = async (em: Em, ownerId: string, id: string): Promise<boolean> =>
  (await em.count(Agent, { id, ownerId })) !== 0;

/** One page of the owner's agents in the requested order. */
export async function ownAgentsPage(
  em: Em,
  ownerId: string,
  page: SortedPageRequest,
): Promise<{ rows: AgentEntity[]; total: number }> {
  const [rows, total] = await em.findAndCount(Agent, { ownerId }, { ...limitOffset(page), orderBy: orderOf(page) });
  return { rows, total };
}

/** One page of the agents among `ids` that `callerId` may see, newest first. */
export async function visibleAgentsPage(
  em: Em,
  callerId: string,
  ids: string[],
  page: PageRequest,
): Promise<{ rows: AgentEntity[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    Agent,
    { id: { $in: ids }, ...visibleTo(callerId) },
    { ...limitOffset(page), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
  );
  return { rows, total };
}

/** Changes the owner's agent; the number of rows changed (0: no such agent of this owner). */
export const updateOwnAgent = (em: Em, ownerId: string, id: string, changes: AgentChanges): Promise<number> =>
  em.nativeUpdate(Agent, { id, ownerId }, changes);
