// What a Member sees of the organization's shared objects goes through their groups: the active groups they
// belong to. A deactivated group keeps its shares (its history) but no longer opens anything to its members.
import type { Em } from '../db/orm.js';
import type { OrgCaller } from './org-caller.js';
import { activeGroupIdsAmong, groupIdsOfMember } from './store/groups.js';

/** The ids of the active groups of the organization the caller belongs to. */
export async function memberGroupIds(em: Em, org: OrgCaller): Promise<string[]> {
  const ids = await groupIdsOfMember(em, org.orgId, org.membershipId);
  if (ids.length === 0) return [];
  return activeGroupIdsAmong(em, org.orgId, ids);
}
