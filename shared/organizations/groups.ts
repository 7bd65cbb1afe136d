// An organization's groups. Admins create, rename, deactivate and reactivate them and read them all; a Member
// reads only the groups it belongs to (any other group is 404, as another organization's would be). Deleting a
// group deactivates it: its members, budgets, shares and history stay, and reactivating it brings it back whole.
import { randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import { OrgGroup, OrgGroupMember } from '../db/entities/index.js';
import { type Em, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type OrgCaller, adminOf, groupIn, memberOf } from './org-caller.js';
import type { ActivityEvent } from '../db/entities/index.js';
import { recordActivity } from '../org-activity/store.js';
import type { Paged } from './members.js';
import { lockAsAdmin } from './org-lock.js';
import type { ListGroupsInput, UpdateGroupInput } from './requests.js';

type GroupRow = InferEntity<typeof OrgGroup>;

export interface GroupView {
  readonly groupId: string;
  readonly name: string;
  readonly active: boolean;
  readonly memberCount: number;
  readonly createdAt: string;
}

const view = (g: GroupRow, memberCount: number): GroupView => ({
  groupId: g.id,
  name: g.name,
  active: g.active,
  memberCount,
  createdAt: g.createdAt.toISOString(),
});

/** How many members each group has (removing a member from the organization deletes its group rows). */
async function memberCounts(em: Em, orgId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map();
  const marks = groupIds.map(() => '?').join(', ');
  const rows = await emSql(em).all(
    `SELECT group_id, count(*) AS n FROM org_group_member WHERE org_id = ? AND group_id IN (${marks}) GROUP BY group_id`,
    [orgId, ...groupIds],
  );
  // PostgreSQL's count is a bigint (read as text), SQLite's a number: both are small.
  return new Map(rows.map((r) => [String(r.group_id), Number(r.n)]));
}

/** The group, when the caller may read it: an Admin any group of the organization, a Member only its own. */
export async function readableGroup(em: Em, caller: OrgCaller, groupId: string): Promise<GroupRow> {
  const g = await groupIn(em, caller, groupId);
  if (caller.role === 'Admin') return g;
  const mine = await em.count(OrgGroupMember, {
    orgId: caller.orgId,
    groupId: g.id,
    membershipId: caller.membershipId,
  });
  if (mine === 0) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  return g;
}

async function groupView(em: Em, g: GroupRow): Promise<GroupView> {
  return view(g, (await memberCounts(em, g.orgId, [g.id])).get(g.id) ?? 0);
}

export async function createGroup(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  name: string,
): Promise<GroupView> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  const g = await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const row = tx.create(OrgGroup, { id: randomUUID(), orgId, name, active: true, createdAt: now });
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'group.created',
        actorUserId: userId,
        subjectType: 'group',
        subjectId: row.id,
        details: { name },
      },
      now,
    );
    return row;
  });
  return view(g, 0);
}

/** The groups the caller may read, oldest first; inactive ones only when asked. */
export async function listGroups(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  q: ListGroupsInput,
): Promise<{ groups: GroupView[]; meta: Paged }> {
  const caller = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  const where: Record<string, unknown> = { orgId };
  if (!q.includeInactive) where.active = true;
  if (caller.role !== 'Admin') {
    const mine = await em.find(OrgGroupMember, { orgId, membershipId: caller.membershipId }, { fields: ['groupId'] });
    where.id = { $in: mine.map((m) => m.groupId) };
  }
  const [rows, total] = await em.findAndCount(OrgGroup, where, {
    orderBy: { createdAt: 'asc', id: 'asc' },
    limit: q.limit,
    offset: (q.page - 1) * q.limit,
  });
  const counts = await memberCounts(
    em,
    orgId,
    rows.map((g) => g.id),
  );
  return { groups: rows.map((g) => view(g, counts.get(g.id) ?? 0)), meta: { total, page: q.page, limit: q.limit } };
}

export async function getGroup(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
): Promise<GroupView> {
  const caller = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  return groupView(em, await readableGroup(em, caller, groupId));
}

/**
 * Renames, deactivates or reactivates a group; each change is one activity entry, and a field already at the
 * value asked changes and records nothing.
 */
export async function updateGroup(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
  change: UpdateGroupInput,
): Promise<GroupView> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  const g = await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const row = await groupIn(tx, caller, groupId);
    const record = (eventType: ActivityEvent, details: Record<string, string>) =>
      recordActivity(
        emSql(tx),
        { orgId, eventType, actorUserId: userId, subjectType: 'group', subjectId: row.id, details },
        now,
      );
    if (change.name !== undefined && change.name !== row.name) {
      await record('group.renamed', { from: row.name, to: change.name });
      row.name = change.name;
    }
    if (change.active !== undefined && change.active !== row.active) {
      row.active = change.active;
      await record(change.active ? 'group.reactivated' : 'group.deactivated', { name: row.name });
    }
    return row;
  });
  return groupView(ctx.db.em(), g);
}
