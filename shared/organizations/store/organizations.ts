// Every statement on `organization`, in the entity manager's style (as most of them were): creating one, reading
// names, and the no-op write that serialises the changes of one organization (org-lock.ts).
import type { InferEntity } from '@mikro-orm/core';
import { raw } from '@mikro-orm/sql';
import { Organization } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';

export type OrganizationRow = InferEntity<typeof Organization>;

/** Adds the organization to `em`'s unit of work; the caller's transaction flushes it. */
export function addOrganization(
  em: Em,
  row: { id: string; name: string; createdByUserId: string; createdAt: Date },
): void {
  em.create(Organization, row);
}

export const organizationsByIds = (em: Em, ids: readonly string[]): Promise<OrganizationRow[]> =>
  em.find(Organization, { id: { $in: [...ids] } });

/**
 * Writes the organization's row without changing it (`name = name`), at once (not at flush): on PostgreSQL the row
 * lock is then held until `tx` ends, on SQLite the write takes the database's write lock.
 */
export async function touchOrganization(tx: Em, orgId: string): Promise<void> {
  await tx.nativeUpdate(Organization, { id: orgId }, { name: raw<string>('name') });
}
