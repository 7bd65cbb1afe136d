// Every statement on the plan table, through the entity manager (no statement on it is a money path: a plan's
// price and credits are read here, and paid and minted elsewhere). Visible to a caller: listed, or the caller's own.
import type { InferEntity } from '@mikro-orm/core';
import { Plan } from '../../db/entities/index.js';
import type { Em } from '../../db/orm.js';
import { type PageRequest, type SortedPageRequest, limitOffset, orderOf } from '../pages.js';
import type { PlanRow } from '../records.js';

export type PlanEntity = InferEntity<typeof Plan>;

/** A new plan's columns: the id is the database's. */
export type NewPlanRow = Omit<PlanRow, 'id'>;

/** The columns an update may change; updatedAt always. */
export type PlanChanges = Partial<Omit<PlanRow, 'id' | 'ownerId' | 'createdAt'>> & { updatedAt: Date };

const visibleTo = (callerId: string) => ({ $or: [{ listed: true }, { ownerId: callerId }] });

/** Inserts in the caller's entity manager (or transaction); the new plan's id. */
export async function insertPlanRow(em: Em, row: NewPlanRow): Promise<number> {
  return Number(await em.insert(Plan, row));
}

/** Any plan, listed or not. */
export const planById = (em: Em, id: number): Promise<PlanEntity | null> => em.findOne(Plan, { id });

/** The plan if `callerId` may see it. */
export const visiblePlanById = (em: Em, callerId: string, id: number): Promise<PlanEntity | null> =>
  em.findOne(Plan, { id, ...visibleTo(callerId) });

export const ownsPlan = async (em: Em, ownerId: string, id: number): Promise<boolean> =>
  (await em.count(Plan, { id, ownerId })) !== 0;

/** One page of the owner's plans in the requested order. */
export async function ownPlansPage(
  em: Em,
  ownerId: string,
  page: SortedPageRequest,
): Promise<{ rows: PlanEntity[]; total: number }> {
  const [rows, total] = await em.findAndCount(Plan, { ownerId }, { ...limitOffset(page), orderBy: orderOf(page) });
  return { rows, total };
}

/** Every plan among `ids` that `callerId` may see, by id. */
export const visiblePlansByIds = (em: Em, callerId: string, ids: number[]): Promise<PlanEntity[]> =>
  em.find(Plan, { id: { $in: ids }, ...visibleTo(callerId) }, { orderBy: { id: 'asc' } });

/** One page of the plans among `ids` that `callerId` may see, newest first. */
export async function visiblePlansPage(
  em: Em,
  callerId: string,
  ids: number[],
  page: PageRequest,
): Promise<{ rows: PlanEntity[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    Plan,
    { id: { $in: ids }, ...visibleTo(callerId) },
    { ...limitOffset(page), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
  );
  return { rows, total };
}

/** Changes the owner's plan; the number of rows changed (0: no such plan of this owner). */
export const updateOwnPlan = (em: Em, ownerId: string, id: number, changes: PlanChanges): Promise<number> =>
  em.nativeUpdate(Plan, { id, ownerId }, changes);
