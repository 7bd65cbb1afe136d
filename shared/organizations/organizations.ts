// Creating an organization (its creator is its first Admin) and the caller's own memberships.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { emSql } from '../db/sql.js';
import { recordActivity } from '../org-activity/store.js';
import { activeMembershipsOfUser, addMembership } from './store/members.js';
import { addOrganization, organizationsByIds } from './store/organizations.js';

export interface OrganizationView {
  readonly orgId: string;
  readonly name: string;
  readonly createdAt: string;
}

export interface MembershipView {
  readonly orgId: string;
  readonly orgName: string;
  readonly role: 'Admin' | 'Member';
  readonly isAdmin: boolean;
}

/** The organization, its creator's Admin membership and the `organization.created` entry, in one transaction. */
export async function createOrganization(ctx: ServiceContext, userId: string, name: string): Promise<OrganizationView> {
  const now = ctx.now();
  const orgId = randomUUID();
  // Only inserts: on SQLite the transaction's first statement is a write, as it must be.
  await ctx.db.em().transactional(async (tx) => {
    addOrganization(tx, { id: orgId, name, createdByUserId: userId, createdAt: now });
    const memberId = randomUUID();
    addMembership(tx, {
      id: memberId,
      orgId,
      userId,
      role: 'Admin',
      active: true,
      createdAt: now,
      removedAt: null,
    });
    await recordActivity(
      emSql(tx),
      {
        orgId,
        eventType: 'organization.created',
        actorUserId: userId,
        subjectType: 'organization',
        subjectId: orgId,
        details: { name, adminMemberId: memberId },
      },
      now,
    );
  });
  return { orgId, name, createdAt: now.toISOString() };
}

/** The caller's active memberships, oldest first. */
export async function myMemberships(ctx: ServiceContext, userId: string): Promise<MembershipView[]> {
  const em = ctx.db.em();
  const memberships = await activeMembershipsOfUser(em, userId);
  if (memberships.length === 0) return [];
  const orgs = await organizationsByIds(
    em,
    memberships.map((m) => m.orgId),
  );
  const names = new Map(orgs.map((o) => [o.id, o.name]));
  return memberships.map((m) => ({
    orgId: m.orgId,
    orgName: names.get(m.orgId) ?? '',
    role: m.role,
    isAdmin: m.role === 'Admin',
  }));
}
