// Plan registry: create, read (listed or own), update and list/unlist (owner only; anyone else gets
// the same 404 as for a plan that does not exist), and the agents a plan is attached to.
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import type { PageOf, PageRequest, SortedPageRequest } from './pages.js';
import { agentIdsOfPlan } from './store/agent-plans.js';
import { visibleAgentsPage } from './store/agents.js';
import { insertPlanRow, ownPlansPage, updateOwnPlan, visiblePlanById } from './store/plans.js';
import { type AgentRecord, type PlanRecord, type PlanRow, agentRecord, planRecord } from './records.js';
import { type CreditsConfig, type PlanInput, type PlanUpdate, type PriceConfig, planIdOf } from './requests.js';

export const planNotFound = (planId: number | string): AppError =>
  new AppError('BCK.PROTOCOL.0003', {
    details: `plan ${String(planId)} not found`,
    params: { planId: String(planId) },
  });

/** The integer id named by a path segment; anything that cannot be a plan id is the 404 of an unknown plan. */
export function requirePlanId(value: string | undefined): number {
  const id = planIdOf(value ?? '');
  if (id === undefined) throw planNotFound((value ?? '').slice(0, 100));
  return id;
}

const priceColumns = (p: PriceConfig) => ({
  priceType: p.priceType,
  tokenAddress: p.tokenAddress,
  amounts: p.amounts.map(toWire),
  receivers: p.receivers,
});

const creditsColumns = (c: CreditsConfig) => ({
  creditsType: c.creditsType,
  creditsAmount: c.amount,
  creditsMinAmount: c.minAmount,
});

/** Inserts a plan inside the caller's entity manager (or transaction); new plans start listed. */
export async function insertPlan(em: Em, ownerId: string, input: PlanInput, now: Date): Promise<PlanRow> {
  const row = {
    ownerId,
    name: input.name,
    description: input.description,
    ...priceColumns(input.priceConfig),
    ...creditsColumns(input.creditsConfig),
    accessLimit: input.accessLimit,
    listed: true,
    createdAt: now,
    updatedAt: now,
  };
  const id = await insertPlanRow(em, row);
  return { ...row, id };
}

export async function createPlan(ctx: ServiceContext, ownerId: string, input: PlanInput): Promise<PlanRecord> {
  return planRecord(await insertPlan(ctx.db.em(), ownerId, input, ctx.now()), ownerId);
}

export async function listOwnPlans(
  ctx: ServiceContext,
  callerId: string,
  page: SortedPageRequest,
): Promise<PageOf<PlanRecord>> {
  const { rows, total } = await ownPlansPage(ctx.db.em(), callerId, page);
  return { total, page: page.page, offset: page.offset, items: rows.map((r) => planRecord(r, callerId)) };
}

/** The plan row if the caller may see it (listed or own), else 404 BCK.PROTOCOL.0003. */
export async function visiblePlan(ctx: ServiceContext, callerId: string, planId: number): Promise<PlanRow> {
  const row = await visiblePlanById(ctx.db.em(), callerId, planId);
  if (row === null) throw planNotFound(planId);
  return row;
}

export async function getPlan(ctx: ServiceContext, callerId: string, planId: number): Promise<PlanRecord> {
  return planRecord(await visiblePlan(ctx, callerId, planId), callerId);
}

export async function updatePlan(
  ctx: ServiceContext,
  callerId: string,
  planId: number,
  update: PlanUpdate,
): Promise<void> {
  const changed = await updateOwnPlan(ctx.db.em(), callerId, planId, {
    ...(update.name === undefined ? {} : { name: update.name }),
    ...(update.description === undefined ? {} : { description: update.description }),
    ...(update.priceConfig === undefined ? {} : priceColumns(update.priceConfig)),
    ...(update.creditsConfig === undefined ? {} : creditsColumns(update.creditsConfig)),
    updatedAt: ctx.now(),
  });
  if (changed === 0) throw planNotFound(planId);
}

export async function setPlanListed(
  ctx: ServiceContext,
  callerId: string,
  planId: number,
  listed: boolean,
): Promise<void> {
  const changed = await updateOwnPlan(ctx.db.em(), callerId, planId, { listed, updatedAt: ctx.now() });
  if (changed === 0) throw planNotFound(planId);
}

/** Agents the plan is attached to; a caller who does not own them sees only the listed ones. */
export async function listPlanAgents(
  ctx: ServiceContext,
  callerId: string,
  planId: number,
  page: PageRequest,
): Promise<PageOf<AgentRecord>> {
  await visiblePlan(ctx, callerId, planId);
  const em = ctx.db.em();
  const ids = await agentIdsOfPlan(em, planId);
  const empty = { total: 0, page: page.page, offset: page.offset, items: [] };
  if (ids.length === 0) return empty;
  const { rows, total } = await visibleAgentsPage(em, callerId, ids, page);
  return { total, page: page.page, offset: page.offset, items: rows.map((r) => agentRecord(r, callerId)) };
}
