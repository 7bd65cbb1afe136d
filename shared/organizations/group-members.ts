// Who is in a group: an Admin adds and removes active members of the organization; whoever may read the group
// (an Admin, or a Member of it) may read its members.
import type { ServiceContext } from '../context.js';
import type { OrgRole } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { adminOf, groupIn, isUuid, memberOf } from './org-caller.js';
import { emSql } from '../db/sql.js';
import { recordActivity } from '../org-activity/store.js';
import { readableGroup } from './groups.js';
import { emailsOf, memberIn } from './members.js';
import { lockAsAdmin } from './org-lock.js';
import { addToGroup, isInGroup, membersOfGroup, removeFromGroup } from './store/groups.js';
import { activeMembershipsAmong, membershipIn } from './store/members.js';

export interface GroupMemberView {
  readonly memberId: string;
  readonly userId: string;
  readonly email: string;
  readonly role: OrgRole;
  readonly addedAt: string;
}

/** Adds an active member of the organization to an active group (409 when it is in it already). */
export async function addGroupMember(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
  memberId: string,
): Promise<void> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const g = await groupIn(tx, caller, groupId);
    const m = await memberIn(tx, caller, memberId);
    // A deactivated group is frozen until reactivated: a member added to it would gain nothing, silently.
    if (!g.active) throw new AppError('BCK.ORG.0010', { details: `group ${g.id} is inactive` });
    if (await isInGroup(tx, { orgId, groupId: g.id, membershipId: m.id }))
      throw new AppError('BCK.ORG.0008', { details: `member ${m.id} is already in group ${g.id}` });
    addToGroup(tx, { groupId: g.id, membershipId: m.id, orgId, createdAt: now });
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'group.member_added',
        actorUserId: userId,
        subjectType: 'group',
        subjectId: g.id,
        details: { memberId: m.id, userId: m.userId },
      },
      now,
    );
  });
}

/** Takes a member out of a group (404 BCK.ORG.0004 when it is not in it). */
export async function removeGroupMember(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
  memberId: string,
): Promise<void> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const g = await groupIn(tx, caller, groupId);
    const removed = isUuid(memberId) ? await removeFromGroup(tx, orgId, g.id, memberId) : 0;
    if (removed === 0) throw new AppError('BCK.ORG.0004', { details: `member ${memberId} is not in group ${g.id}` });
    const m = await membershipIn(tx, orgId, memberId);
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'group.member_removed',
        actorUserId: userId,
        subjectType: 'group',
        subjectId: g.id,
        details: { memberId, userId: m?.userId ?? null },
      },
      now,
    );
  });
}

/** The group's members, in the order they were added. */
export async function listGroupMembers(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
): Promise<GroupMemberView[]> {
  const caller = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  const g = await readableGroup(em, caller, groupId);
  const rows = await membersOfGroup(em, orgId, g.id);
  if (rows.length === 0) return [];
  const memberships = await activeMembershipsAmong(
    em,
    orgId,
    rows.map((r) => r.membershipId),
  );
  const byId = new Map(memberships.map((m) => [m.id, m]));
  const emails = await emailsOf(
    em,
    memberships.map((m) => m.userId),
  );
  return rows.flatMap((r) => {
    const m = byId.get(r.membershipId);
    if (m === undefined) return [];
    return [
      {
        memberId: m.id,
        userId: m.userId,
        email: emails.get(m.userId) ?? '',
        role: m.role,
        addedAt: r.createdAt.toISOString(),
      },
    ];
  });
}
