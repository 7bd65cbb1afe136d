// Changes to an organization's members and groups run one after another per organization. Each write transaction
// starts by touching the organization's row: on PostgreSQL the row lock queues concurrent changes of the same
// organization (a second one waits for the first to commit, then reads what it wrote), on SQLite the write takes
// the database's write lock at once (a read first would fail the read-to-write upgrade under concurrent writers).
// Checks that span several rows, such as "another active Admin remains", are then race-free: two Admins demoting
// each other at once cannot both see the other still an Admin.
import type { Em } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import type { OrgCaller } from './org-caller.js';
import { activeMembershipIn } from './store/members.js';
import { touchOrganization } from './store/organizations.js';

/**
 * Locks the organization for the rest of the transaction `tx`, then checks that the caller is still an active
 * Admin: the check before the transaction may have been overtaken by a change that committed meanwhile.
 */
export async function lockAsAdmin(tx: Em, caller: OrgCaller): Promise<void> {
  await touchOrganization(tx, caller.orgId);
  const me = await activeMembershipIn(tx, caller.orgId, caller.membershipId);
  if (me === null) throw new AppError('BCK.ORG.0001', { details: `organization ${caller.orgId} not found` });
  if (me.role !== 'Admin')
    throw new AppError('BCK.ORG.0002', { details: 'only an Admin of the organization may do this' });
}
