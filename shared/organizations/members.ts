// An organization's members: adding (or re-adding) a user, listing, changing a role, removing. Removal is soft
// (the membership keeps its id, so the activity log and budgets still name it) and takes the member out of every
// group of the organization. The organization always keeps an active Admin: the check runs after the
// organization's lock (org-lock.ts), so concurrent demotions cannot both pass it.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { type OrgRole, User } from '../db/entities/index.js';
import { type Em, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type OrgCaller, adminOf, isUuid, memberOf } from './org-caller.js';
import { recordActivity } from '../org-activity/store.js';
import { lockAsAdmin } from './org-lock.js';
import type { AddMemberInput, PageInput } from './requests.js';
import { removeFromAllGroups } from './store/groups.js';
import {
  type MembershipRow,
  activeMembersPage,
  activeMembershipIn,
  addMembership,
  assignMembership,
  membershipOfUser,
  otherActiveAdmins,
} from './store/members.js';

export interface MemberView {
  readonly memberId: string;
  readonly userId: string;
  readonly email: string;
  readonly role: OrgRole;
  readonly createdAt: string;
}

export interface Paged {
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

const view = (m: MembershipRow, email: string): MemberView => ({
  memberId: m.id,
  userId: m.userId,
  email,
  role: m.role,
  createdAt: m.createdAt.toISOString(),
});

const memberNotFound = (memberId: string) => new AppError('BCK.ORG.0004', { details: `member ${memberId} not found` });

/** An active member of the caller's organization (404 BCK.ORG.0004 otherwise, whatever organization it is in). */
export async function memberIn(em: Em, org: Pick<OrgCaller, 'orgId'>, memberId: string): Promise<MembershipRow> {
  const m = isUuid(memberId) ? await activeMembershipIn(em, org.orgId, memberId) : null;
  if (m === null) throw memberNotFound(memberId);
  return m;
}

/** The users' emails by id (a member's email is read from the account, never copied). */
export async function emailsOf(em: Em, userIds: readonly string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const users = await em.find(User, { id: { $in: [...new Set(userIds)] } }, { fields: ['id', 'email'] });
  return new Map(users.map((u) => [u.id, u.email]));
}

async function userNamed(ctx: ServiceContext, input: AddMemberInput) {
  const em = ctx.db.em();
  const user =
    input.userId !== undefined
      ? await em.findOne(User, { id: input.userId })
      : await em.findOne(User, { email: input.email ?? '' });
  if (user === null)
    throw new AppError('BCK.ORG.0004', { details: `user ${input.userId ?? input.email ?? ''} not found` });
  return user;
}

/**
 * Adds the user as a member. A user removed earlier is added again on the same membership (its memberId is kept;
 * its createdAt becomes the date it joined again); an active member is 409 BCK.ORG.0008.
 */
export async function addMember(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  input: AddMemberInput,
): Promise<MemberView> {
  const caller = await adminOf(ctx, userId, orgId);
  const user = await userNamed(ctx, input);
  const now = ctx.now();
  const m = await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const existing = await membershipOfUser(tx, orgId, user.id);
    if (existing?.active === true)
      throw new AppError('BCK.ORG.0008', { details: `user ${user.id} is already a member of organization ${orgId}` });
    let row: MembershipRow;
    if (existing === null) {
      row = addMembership(tx, {
        id: randomUUID(),
        orgId,
        userId: user.id,
        role: input.role,
        active: true,
        createdAt: now,
        removedAt: null,
      });
    } else {
      assignMembership(tx, existing, { role: input.role, active: true, createdAt: now, removedAt: null });
      row = existing;
    }
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'member.added',
        actorUserId: userId,
        subjectType: 'member',
        subjectId: row.id,
        details: { userId: user.id, role: input.role, reactivated: existing !== null },
      },
      now,
    );
    return row;
  });
  return view(m, user.email);
}

/** The organization's active members, oldest first; every member may read them. */
export async function listMembers(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  q: PageInput,
): Promise<{ members: MemberView[]; meta: Paged }> {
  await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  const { rows, total } = await activeMembersPage(em, orgId, { limit: q.limit, offset: (q.page - 1) * q.limit });
  const emails = await emailsOf(
    em,
    rows.map((r) => r.userId),
  );
  return {
    members: rows.map((r) => view(r, emails.get(r.userId) ?? '')),
    meta: { total, page: q.page, limit: q.limit },
  };
}

/** 409 BCK.ORG.0009 when `target` is the organization's last active Admin (call under the organization's lock). */
async function keepAnAdmin(tx: Em, target: MembershipRow): Promise<void> {
  if (target.role !== 'Admin') return;
  if ((await otherActiveAdmins(tx, target.orgId, target.id)) === 0)
    throw new AppError('BCK.ORG.0009', {
      details: `member ${target.id} is the last Admin of organization ${target.orgId}`,
    });
}

/** Sets a member's role; setting the role it has already changes nothing and records nothing. */
export async function changeRole(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  memberId: string,
  role: OrgRole,
): Promise<MemberView> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  const m = await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const target = await memberIn(tx, caller, memberId);
    if (target.role === role) return target;
    if (role !== 'Admin') await keepAnAdmin(tx, target);
    const from = target.role;
    assignMembership(tx, target, { role });
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'member.role_changed',
        actorUserId: userId,
        subjectType: 'member',
        subjectId: target.id,
        details: { userId: target.userId, from, to: role },
      },
      now,
    );
    return target;
  });
  const emails = await emailsOf(ctx.db.em(), [m.userId]);
  return view(m, emails.get(m.userId) ?? '');
}

/** Removes a member (soft) and takes it out of the organization's groups. */
export async function removeMember(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  memberId: string,
): Promise<void> {
  const caller = await adminOf(ctx, userId, orgId);
  const now = ctx.now();
  await ctx.db.em().transactional(async (tx) => {
    await lockAsAdmin(tx, caller);
    const target = await memberIn(tx, caller, memberId);
    await keepAnAdmin(tx, target);
    assignMembership(tx, target, { active: false, removedAt: now });
    const groupsLeft = await removeFromAllGroups(tx, orgId, target.id);
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'member.removed',
        actorUserId: userId,
        subjectType: 'member',
        subjectId: target.id,
        details: { userId: target.userId, role: target.role, groupsLeft },
      },
      now,
    );
  });
}
