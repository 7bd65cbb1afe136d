// 64-bit integer columns as `bigint`, exactly, on both databases.
// better-sqlite3 hands INTEGER values to JavaScript as numbers, which silently round above 2^53; turning on its
// safe-integers mode globally breaks MikroORM's counts. So the column is read as text in SQL
// (convertToJSValueSQL, applied by MikroORM to every select of the property) and parsed with BigInt.
// PostgreSQL's driver already returns int8 as a string.
import { type Platform, Type } from '@mikro-orm/core';

export class Int64Type extends Type<bigint, string | bigint> {
  override convertToDatabaseValue(value: bigint): bigint {
    return value;
  }

  override convertToJSValue(value: string | bigint): bigint {
    return typeof value === 'bigint' ? value : BigInt(value);
  }

  override convertToJSValueSQL(key: string, platform: Platform): string {
    return isSqlite(platform) ? `cast(${key} as text)` : key;
  }

  override getColumnType(): string {
    return 'bigint';
  }

  override compareAsType(): string {
    return 'bigint';
  }
}

function isSqlite(platform: Platform): boolean {
  return platform.constructor.name.toLowerCase().includes('sqlite');
}
