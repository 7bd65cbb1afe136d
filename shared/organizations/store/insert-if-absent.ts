// One insert shared by the entity-manager stores whose rows are pairs (a wallet or a card shared with a group).
import type { EntityKey, EntityName, RequiredEntityData } from '@mikro-orm/core';
import type { Em } from '../../db/sql.js';

/**
 * Inserts `row` at once unless a row with the same `key` exists (ON CONFLICT DO NOTHING); whether it inserted.
 * On PostgreSQL a concurrent insert of the same key waits on this one until `tx` ends.
 */
export async function insertIfAbsent<T extends object>(
  tx: Em,
  entity: EntityName<T>,
  row: RequiredEntityData<T>,
  key: readonly EntityKey<T>[],
): Promise<boolean> {
  const res = await tx
    .createQueryBuilder(entity)
    .insert(row)
    .onConflict([...key])
    .ignore()
    .execute<{ affectedRows: number }>('run');
  return res.affectedRows === 1;
}
