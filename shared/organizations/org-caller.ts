// Who may see and manage an organization: the caller's active membership, resolved once per request. Anyone who
// is not an active member gets 404 (the organization is not confirmed to exist); a Member who tries to manage gets
// 403. Every object read afterwards is looked up with the organization's id in its WHERE, so an id of another
// organization is 404 even for an Admin of this one.
import type { ServiceContext } from '../context.js';
import type { OrgRole } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import { type GroupRow, groupById } from './store/groups.js';
import { activeMembershipOfUser } from './store/members.js';

/** The caller's standing in one organization. */
export interface OrgCaller {
  readonly orgId: string;
  readonly userId: string;
  readonly membershipId: string;
  readonly role: OrgRole;
}

/** Organization ids are UUIDs; anything else names no organization (404, never a database error). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isUuid = (id: string): boolean => UUID.test(id);

/** The caller's active membership of `orgId`, or 404 BCK.ORG.0001. */
export async function memberOf(ctx: ServiceContext, userId: string, orgId: string): Promise<OrgCaller> {
  const m = isUuid(orgId) ? await activeMembershipOfUser(ctx.db.em(), orgId, userId) : null;
  if (m === null) throw new AppError('BCK.ORG.0001', { details: `organization ${orgId} not found` });
  return { orgId, userId, membershipId: m.id, role: m.role };
}

/** The same, for what only an Admin may do: 403 BCK.ORG.0002 for a Member. */
export async function adminOf(ctx: ServiceContext, userId: string, orgId: string): Promise<OrgCaller> {
  const m = await memberOf(ctx, userId, orgId);
  if (m.role !== 'Admin')
    throw new AppError('BCK.ORG.0002', { details: 'only an Admin of the organization may do this' });
  return m;
}

/** A group of the caller's organization (404 BCK.ORG.0003 otherwise, whatever organization it belongs to). */
export async function groupIn(em: Em, org: OrgCaller, groupId: string): Promise<GroupRow> {
  const g = isUuid(groupId) ? await groupById(em, org.orgId, groupId) : null;
  if (g === null) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  return g;
}
