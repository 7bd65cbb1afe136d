// Creating an organization (its creator is its first Admin) and the caller's own memberships.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { OrgMembership, Organization } from '../db/entities/index.js';
import { emSql } from '../db/sql.js';
import { recordActivity } from '../org-activity/store.js';

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
    tx.create(Organization, { id: orgId, name, createdByUserId: userId, createdAt: now });
    const memberId = randomUUID();
    tx.create(OrgMembership, {
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
  const memberships = await em.find(
    OrgMembership,
    { userId, active: true },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  if (memberships.length === 0) return [];
  const orgs = await em.find(Organization, { id: { $in: memberships.map((m) => m.orgId) } });
  const names = new Map(orgs.map((o) => [o.id, o.name]));
  return memberships.map((m) => ({
    orgId: m.orgId,
    orgName: names.get(m.orgId) ?? '',
    role: m.role,
    isAdmin: m.role === 'Admin',
  }));
}
