import { raw } from '@mikro-orm/sql';

/**
 * A raw SQL predicate as a MikroORM filter, for conditions between columns (`spent + ? <= cap`). Int64 columns
 * are read as text on SQLite (see int64-type.ts), so comparisons on them are written in SQL, never as
 * `{ column: { $lte: ... } }`. Parenthesised: PostgreSQL's comparison operators are non-associative.
 */
export function sqlCondition(sql: string, params: readonly unknown[] = []): Record<string, true> {
  // raw() returns a string key MikroORM recognises as a raw fragment.
  return { [raw<string>(`(${sql})`, params)]: true };
}
