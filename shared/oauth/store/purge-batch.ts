// The purge's one statement shape for the tables written through the entity manager: a batch of keys chosen by a
// condition and a limit, deleted by ONE statement (`delete ... where key in (select key ... limit n)`), so a batch
// holds the write lock no longer than its own rows take.
import type { EntityKey, EntityName } from '@mikro-orm/core';
import type { QBFilterQuery } from '@mikro-orm/sql';
import type { Em } from '../../db/sql.js';

/** Deletes up to `limit` rows of `entity` matching `where`, by their `key`; how many it deleted. */
export async function deleteBatch<T extends object>(
  em: Em,
  entity: EntityName<T>,
  key: EntityKey<T>,
  where: QBFilterQuery<T>,
  limit: number,
): Promise<number> {
  const batch = em.createQueryBuilder(entity).where(where).select(key).limit(limit);
  // A computed key of a generic entity is beyond MikroORM's filter types: `key` is one of T's own, as typed above.
  const inBatch = { [key]: { $in: batch } } as QBFilterQuery<T>;
  const deleted = await em.createQueryBuilder(entity).delete().where(inBatch).execute('run');
  return deleted.affectedRows;
}
