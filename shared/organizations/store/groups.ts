// Every statement on `org_group` and `org_group_member` (who is in which group), in the entity manager's style (as
// most of them were). New rows and changes go into the caller's unit of work and are flushed with its transaction;
// deletes run at once. The spend's locked access check reads these tables in SQL inside the spend's own transaction
// (spend-access.ts).
import type { InferEntity } from '@mikro-orm/core';
import { raw } from '@mikro-orm/sql';
import { OrgGroup, OrgGroupMember } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';

export type GroupRow = InferEntity<typeof OrgGroup>;
export type GroupMemberRow = InferEntity<typeof OrgGroupMember>;

/** Adds a group to `em`'s unit of work; the caller's transaction flushes it. */
export const addGroup = (
  em: Em,
  row: { id: string; orgId: string; name: string; active: boolean; createdAt: Date },
): GroupRow => em.create(OrgGroup, row);

/** Changes a group read through `em`; the caller's transaction flushes it. */
export function assignGroup(em: Em, g: GroupRow, change: Partial<Pick<GroupRow, 'name' | 'active'>>): void {
  em.assign(g, change);
}

export const groupById = (em: Em, orgId: string, groupId: string): Promise<GroupRow | null> =>
  em.findOne(OrgGroup, { id: groupId, orgId });

export async function isActiveGroup(em: Em, orgId: string, groupId: string): Promise<boolean> {
  return (await em.count(OrgGroup, { id: groupId, orgId, active: true })) === 1;
}

/** The ids of the active groups among `ids`. */
export async function activeGroupIdsAmong(em: Em, orgId: string, ids: readonly string[]): Promise<string[]> {
  const groups = await em.find(OrgGroup, { id: { $in: [...ids] }, orgId, active: true });
  return groups.map((g) => g.id);
}

/**
 * One page of the organization's groups, oldest first, and how many there are: inactive ones only when asked,
 * and only the groups among `ids` when given.
 */
export async function groupsPage(
  em: Em,
  orgId: string,
  q: { includeInactive: boolean; ids: readonly string[] | undefined; limit: number; offset: number },
): Promise<{ rows: GroupRow[]; total: number }> {
  const where: Record<string, unknown> = { orgId };
  if (!q.includeInactive) where.active = true;
  if (q.ids !== undefined) where.id = { $in: [...q.ids] };
  const [rows, total] = await em.findAndCount(OrgGroup, where, {
    orderBy: { createdAt: 'asc', id: 'asc' },
    limit: q.limit,
    offset: q.offset,
  });
  return { rows, total };
}

/** Adds a member to a group in `em`'s unit of work; the caller's transaction flushes it. */
export function addToGroup(
  em: Em,
  row: { groupId: string; membershipId: string; orgId: string; createdAt: Date },
): void {
  em.create(OrgGroupMember, row);
}

/**
 * Whether the membership is in the group. With `orgId`, only a link of that organization counts; the budget
 * endpoints ask without it, the group having been found in the caller's organization already.
 */
export async function isInGroup(
  em: Em,
  link: { groupId: string; membershipId: string; orgId?: string },
): Promise<boolean> {
  if (link.orgId === undefined)
    return (await em.findOne(OrgGroupMember, { groupId: link.groupId, membershipId: link.membershipId })) !== null;
  return (
    (await em.count(OrgGroupMember, { orgId: link.orgId, groupId: link.groupId, membershipId: link.membershipId })) > 0
  );
}

/** The ids of the groups (active or not) the membership is in. */
export async function groupIdsOfMember(em: Em, orgId: string, membershipId: string): Promise<string[]> {
  const links = await em.find(OrgGroupMember, { orgId, membershipId }, { fields: ['groupId'] });
  return links.map((l) => l.groupId);
}

/** The group's member links, in the order they were added. */
export const membersOfGroup = (em: Em, orgId: string, groupId: string): Promise<GroupMemberRow[]> =>
  em.find(OrgGroupMember, { orgId, groupId }, { orderBy: { createdAt: 'asc', membershipId: 'asc' } });

/**
 * How many members each group has (groups without members are absent). Removing a member from the organization
 * deletes its links, so only members count.
 */
export async function memberCounts(em: Em, orgId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map();
  const rows = await em
    .createQueryBuilder(OrgGroupMember)
    .select([raw('group_id as g'), raw('count(*) as n')])
    .where({ orgId, groupId: { $in: [...groupIds] } })
    .groupBy('groupId')
    .execute<{ g: string; n: unknown }[]>('all', false);
  // PostgreSQL's count is a bigint (read as text), SQLite's a number: both are small.
  return new Map(rows.map((r) => [String(r.g), Number(r.n)]));
}

/** Takes the membership out of the group at once; the number of links deleted (0 or 1). */
export const removeFromGroup = (em: Em, orgId: string, groupId: string, membershipId: string): Promise<number> =>
  em.nativeDelete(OrgGroupMember, { orgId, groupId, membershipId });

/** Takes the membership out of every group of the organization at once; the number of links deleted. */
export const removeFromAllGroups = (em: Em, orgId: string, membershipId: string): Promise<number> =>
  em.nativeDelete(OrgGroupMember, { orgId, membershipId });
