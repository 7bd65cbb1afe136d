import { Migration } from '@mikro-orm/migrations';

const MAX_INT64 = 9_223_372_036_854_775_807n;
const BATCH = 500;

/**
 * credit_holding: per (plan, holder) the sum of `remaining` over the pair's lots, where the 64-bit bound of a
 * balance is checked (shared/credits/lots.ts). The backfill sums every lot of every pair: expired lots too, as
 * their remainders are written off only by the next mint to the pair. The sum is taken in two halves (the high and
 * low 32 bits of each lot, each half's sum fitting 64 bits below 2^31 lots a pair) and joined as a bigint here:
 * one statement for both dialects (SQLite's sum() raises on overflow; PostgreSQL's sum of bigint is numeric). A
 * pair already past 2^63 - 1 (only the defect this table fixes could mint that) is recorded at 2^63 - 1: it can
 * still spend, and be minted more once below the bound.
 */
export class Migration20261124030100_credit_holding extends Migration {
  override name = 'Migration20261124030100_credit_holding';

  override async up(): Promise<void> {
    await this.execute(
      'create table "credit_holding" ("plan_id" int not null, "holder_address" varchar(255) not null, "total" bigint not null default 0, primary key ("plan_id", "holder_address"));',
    );
    const rows = await this.execute(
      `select plan_id, holder_address, cast(sum(remaining >> 32) as text) as hi, cast(sum(remaining & 4294967295) as text) as lo
       from credit_lot group by plan_id, holder_address`,
    );
    const totals = rows.map((r) => {
      const total = (BigInt(String(r.hi)) << 32n) + BigInt(String(r.lo));
      return [Number(r.plan_id), String(r.holder_address), total > MAX_INT64 ? MAX_INT64 : total] as const;
    });
    for (let i = 0; i < totals.length; i += BATCH) {
      const batch = totals.slice(i, i + BATCH);
      await this.execute(
        `insert into "credit_holding" ("plan_id", "holder_address", "total") values ${batch.map(() => '(?, ?, ?)').join(', ')}`,
        batch.flat(),
      );
    }
  }

  override down(): void | Promise<void> {
    this.addSql('drop table if exists "credit_holding" cascade;');
  }
}
