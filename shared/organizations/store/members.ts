// Every statement on `org_membership`, in the entity manager's style (as most of them were). New rows and changes
// go into the caller's unit of work and are flushed with its transaction; reads return managed entities, so a
// change the caller assigns to one is flushed the same way. The spend's locked access check reads this table in
// SQL inside the spend's own transaction (spend-access.ts).
import type { InferEntity } from '@mikro-orm/core';
import { OrgMembership, type OrgRole } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';

export type MembershipRow = InferEntity<typeof OrgMembership>;

type MembershipChange = Partial<Pick<MembershipRow, 'role' | 'active' | 'createdAt' | 'removedAt'>>;

/** Adds a membership to `em`'s unit of work; the caller's transaction flushes it. */
export const addMembership = (
  em: Em,
  row: {
    id: string;
    orgId: string;
    userId: string;
    role: OrgRole;
    active: boolean;
    createdAt: Date;
    removedAt: Date | null;
  },
): MembershipRow => em.create(OrgMembership, row);

/** Changes a membership read through `em`; the caller's transaction flushes it. */
export function assignMembership(em: Em, m: MembershipRow, change: MembershipChange): void {
  em.assign(m, change);
}

/** The user's membership of the organization, active or removed. */
export const membershipOfUser = (em: Em, orgId: string, userId: string): Promise<MembershipRow | null> =>
  em.findOne(OrgMembership, { orgId, userId });

export const activeMembershipOfUser = (em: Em, orgId: string, userId: string): Promise<MembershipRow | null> =>
  em.findOne(OrgMembership, { orgId, userId, active: true });

/** The membership `id` of the organization, active or removed. */
export const membershipIn = (em: Em, orgId: string, id: string): Promise<MembershipRow | null> =>
  em.findOne(OrgMembership, { id, orgId });

export const activeMembershipIn = (em: Em, orgId: string, id: string): Promise<MembershipRow | null> =>
  em.findOne(OrgMembership, { id, orgId, active: true });

/** The user's active memberships of every organization, oldest first. */
export const activeMembershipsOfUser = (em: Em, userId: string): Promise<MembershipRow[]> =>
  em.find(OrgMembership, { userId, active: true }, { orderBy: { createdAt: 'asc', id: 'asc' } });

/** The active memberships among `ids` (in no particular order). */
export const activeMembershipsAmong = (em: Em, orgId: string, ids: readonly string[]): Promise<MembershipRow[]> =>
  em.find(OrgMembership, { orgId, active: true, id: { $in: [...ids] } });

/** One page of the organization's active members, oldest first, and how many there are. */
export async function activeMembersPage(
  em: Em,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: MembershipRow[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    OrgMembership,
    { orgId, active: true },
    { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset },
  );
  return { rows, total };
}

/** How many active Admins the organization has besides the membership `exceptId`. */
export const otherActiveAdmins = (em: Em, orgId: string, exceptId: string): Promise<number> =>
  em.count(OrgMembership, { orgId, role: 'Admin', active: true, id: { $ne: exceptId } });
