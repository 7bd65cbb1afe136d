import { Migration } from '@mikro-orm/migrations';

export class Migration20261124120000_chain_orders extends Migration {

  override name = 'Migration20261124120000_chain_orders';

  override up(): void | Promise<void> {
    this.addSql(`create table "chain_order" ("id" varchar(255) not null, "plan_id" varchar(255) not null, "buyer_user_id" varchar(255) not null, "holder_address" varchar(255) not null, "payer_address" varchar(255) not null, "asset" varchar(255) not null, "amount_paid" bigint not null, "credits" bigint not null, "status" text not null, "tx_hash" varchar(255) null, "failure_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chain_order_submitting_index" on "chain_order" ("created_at") where status = 'submitting';`);

    this.addSql(`alter table "chain_order" add constraint "chain_order_status_check" check ("status" in ('submitting', 'paid', 'failed'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chain_order" cascade;`);
  }

}
