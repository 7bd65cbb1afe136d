// An organization's groups. Admins create, rename, deactivate and reactivate them and read them all; a Member
// reads only the groups it belongs to (any other group is 404, as another organization's would be). Deleting a
// group deactivates it: its members, budgets, shares and history stay, and reactivating it brings it back whole.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { type Em, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type OrgCaller, adminOf, groupIn, memberOf } from './org-caller.js';
import type { ActivityEvent } from '../db/entities/index.js';
import { recordActivity } from '../org-activity/store.js';
import type { Paged } from './members.js';
import { lockAsAdmin } from './org-lock.js';
import type { ListGroupsInput, UpdateGroupInput } from './requests.js';
import {
  type GroupRow,
  addGroup,
  assignGroup,
  groupIdsOfMember,
  groupsPage,
  isInGroup,
  memberCounts,
} from './store/groups.js';

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

/** The group, when the caller may read it: an Admin any group of the organization, a Member only its own. */
export async function readableGroup(em: Em, caller: OrgCaller, groupId: string): Promise<GroupRow> {
  const g = await groupIn(em, caller, groupId);
  if (caller.role === 'Admin') return g;
  const mine = await isInGroup(em, { orgId: caller.orgId, groupId: g.id, membershipId: caller.membershipId });
  if (!mine) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
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
    const row = addGroup(tx, { id: randomUUID(), orgId, name, active: true, createdAt: now });
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
  // A Member lists only the groups it is in.
  const ids = caller.role === 'Admin' ? undefined : await groupIdsOfMember(em, orgId, caller.membershipId);
  const { rows, total } = await groupsPage(em, orgId, {
    includeInactive: q.includeInactive,
    ids,
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
      assignGroup(tx, row, { name: change.name });
    }
    if (change.active !== undefined && change.active !== row.active) {
      assignGroup(tx, row, { active: change.active });
      await record(change.active ? 'group.reactivated' : 'group.deactivated', { name: row.name });
    }
    return row;
  });
  return groupView(ctx.db.em(), g);
}
