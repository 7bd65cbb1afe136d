// What a Member sees of the organization's shared objects goes through their groups: the active groups they
// belong to. A deactivated group keeps its shares (its history) but no longer opens anything to its members.
import { OrgGroup, OrgGroupMember } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';
import type { OrgCaller } from './org-caller.js';

/** The ids of the active groups of the organization the caller belongs to. */
export async function memberGroupIds(em: Em, org: OrgCaller): Promise<string[]> {
  const links = await em.find(OrgGroupMember, { membershipId: org.membershipId, orgId: org.orgId });
  if (links.length === 0) return [];
  const groups = await em.find(OrgGroup, {
    id: { $in: links.map((l) => l.groupId) },
    orgId: org.orgId,
    active: true,
  });
  return groups.map((g) => g.id);
}
