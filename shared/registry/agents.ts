// Agent registry: create, read (listed or own), update and list/unlist (owner only; anyone else gets
// the same 404 as for an agent that does not exist), and attaching the owner's plans to the owner's agents.
import { randomBytes } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../../config/index.js';
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import type { PageOf, PageRequest, SortedPageRequest } from './pages.js';
import { planNotFound } from './plans.js';
import { deleteAgentPlan, insertAgentPlan, planIdsOfAgent } from './store/agent-plans.js';
import { insertAgentRow, ownAgentsPage, ownsAgent, updateOwnAgent, visibleAgentById } from './store/agents.js';
import { ownsPlan, visiblePlansByIds, visiblePlansPage } from './store/plans.js';
import { type AgentRecord, type AgentRow, type PlanRecord, agentRecord, planRecord } from './records.js';
import { type AgentInput, type AgentUpdate, isAgentId } from './requests.js';

export const agentNotFound = (agentId: string): AppError =>
  new AppError('BCK.PROTOCOL.0004', { details: 'agent not found', params: { agentId: agentId.slice(0, 100) } });

/** `did:payroute:<environment>:<128 random bits in hex>`. */
export const newAgentId = (environment: Config['ENVIRONMENT']): string =>
  `did:payroute:${environment}:${randomBytes(16).toString('hex')}`;

/** Inserts an agent inside the caller's entity manager (or transaction); new agents start listed. */
export async function insertAgent(
  em: Em,
  environment: Config['ENVIRONMENT'],
  ownerId: string,
  input: AgentInput,
  now: Date,
): Promise<AgentRow> {
  const row: AgentRow = {
    id: newAgentId(environment),
    ownerId,
    name: input.name,
    description: input.description,
    tags: input.tags,
    endpoints: input.endpoints,
    agentDefinitionUrl: input.agentDefinitionUrl,
    listed: true,
    createdAt: now,
    updatedAt: now,
  };
  await insertAgentRow(em, row);
  return row;
}

export async function createAgent(ctx: ServiceContext, ownerId: string, input: AgentInput): Promise<AgentRecord> {
  return agentRecord(await insertAgent(ctx.db.em(), ctx.config.ENVIRONMENT, ownerId, input, ctx.now()), ownerId);
}

export async function listOwnAgents(
  ctx: ServiceContext,
  callerId: string,
  page: SortedPageRequest,
): Promise<PageOf<AgentRecord>> {
  const { rows, total } = await ownAgentsPage(ctx.db.em(), callerId, page);
  return { total, page: page.page, offset: page.offset, items: rows.map((r) => agentRecord(r, callerId)) };
}

/** The agent row if the caller may see it (listed or own), else 404 BCK.PROTOCOL.0004. */
export async function visibleAgent(ctx: ServiceContext, callerId: string, agentId: string): Promise<AgentRow> {
  // A string that cannot be an agent id names no agent; it never reaches the database.
  if (!isAgentId(agentId)) throw agentNotFound(agentId);
  const row = await visibleAgentById(ctx.db.em(), callerId, agentId);
  if (row === null) throw agentNotFound(agentId);
  return row;
}

/** The agent with the plans attached to it that the caller may see. */
export async function getAgent(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
): Promise<AgentRecord & { plans: PlanRecord[] }> {
  const agent = await visibleAgent(ctx, callerId, agentId);
  const em = ctx.db.em();
  const ids = await planIdsOfAgent(em, agent.id);
  const plans = ids.length === 0 ? [] : await visiblePlansByIds(em, callerId, ids);
  return { ...agentRecord(agent, callerId), plans: plans.map((p) => planRecord(p, callerId)) };
}

/** Attached plans the caller may see, paged (newest plan first). */
export async function listAgentPlans(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
  page: PageRequest,
): Promise<PageOf<PlanRecord>> {
  const agent = await visibleAgent(ctx, callerId, agentId);
  const em = ctx.db.em();
  const ids = await planIdsOfAgent(em, agent.id);
  if (ids.length === 0) return { total: 0, page: page.page, offset: page.offset, items: [] };
  const { rows, total } = await visiblePlansPage(em, callerId, ids, page);
  return { total, page: page.page, offset: page.offset, items: rows.map((r) => planRecord(r, callerId)) };
}

export async function updateAgent(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
  update: AgentUpdate,
): Promise<void> {
  if (!isAgentId(agentId)) throw agentNotFound(agentId);
  const changed = await updateOwnAgent(ctx.db.em(), callerId, agentId, {
    ...(update.name === undefined ? {} : { name: update.name }),
    ...(update.description === undefined ? {} : { description: update.description }),
    ...(update.tags === undefined ? {} : { tags: update.tags }),
    ...(update.endpoints === undefined ? {} : { endpoints: update.endpoints }),
    ...(update.agentDefinitionUrl === undefined ? {} : { agentDefinitionUrl: update.agentDefinitionUrl }),
    updatedAt: ctx.now(),
  });
  if (changed === 0) throw agentNotFound(agentId);
}

export async function setAgentListed(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
  listed: boolean,
): Promise<void> {
  if (!isAgentId(agentId)) throw agentNotFound(agentId);
  const changed = await updateOwnAgent(ctx.db.em(), callerId, agentId, { listed, updatedAt: ctx.now() });
  if (changed === 0) throw agentNotFound(agentId);
}

async function assertOwnsAgent(em: Em, callerId: string, agentId: string): Promise<void> {
  if (!isAgentId(agentId) || !(await ownsAgent(em, callerId, agentId))) {
    throw agentNotFound(agentId);
  }
}

async function assertOwnsPlan(em: Em, callerId: string, planId: number): Promise<void> {
  if (!(await ownsPlan(em, callerId, planId))) throw planNotFound(planId);
}

/** Attaches one of the caller's plans to one of the caller's agents; attaching again is a no-op. */
export async function attachPlan(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
  planId: number,
): Promise<void> {
  const em = ctx.db.em();
  await assertOwnsAgent(em, callerId, agentId);
  await assertOwnsPlan(em, callerId, planId);
  try {
    await insertAgentPlan(em, { agentId, planId, createdAt: ctx.now() });
  } catch (err) {
    // Already attached (possibly by a concurrent request): the pair exists, which is what was asked.
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
  }
}

/** Detaches a plan; 404 when the agent or plan is not the caller's, or the pair is not attached. */
export async function detachPlan(
  ctx: ServiceContext,
  callerId: string,
  agentId: string,
  planId: number,
): Promise<void> {
  const em = ctx.db.em();
  await assertOwnsAgent(em, callerId, agentId);
  await assertOwnsPlan(em, callerId, planId);
  const removed = await deleteAgentPlan(em, agentId, planId);
  if (removed === 0) {
    throw new AppError('BCK.PROTOCOL.0040', {
      details: `plan ${planId} is not attached to this agent`,
      params: {
        agentId,
        planId: String(planId),
      },
    });
  }
}
