import { Migration } from '@mikro-orm/migrations';

export class Migration20261121234504_router extends Migration {

  override name = 'Migration20261121234504_router';

  override up(): void | Promise<void> {
    this.addSql(`create table "catalog_entry" ("slug" varchar(255) not null, "upstream_url" text not null, "created_at" timestamptz not null, primary key ("slug"));`);

    this.addSql(`create table "router_payment" ("id" varchar(255) not null, "user_id" varchar(255) not null, "api_key_id" varchar(255) not null, "request_id" varchar(255) null, "delegation_id" varchar(255) not null, "mode" varchar(255) not null, "protocol" varchar(255) not null, "x402version" int null, "status" varchar(255) not null, "scheme" varchar(255) not null, "network" varchar(255) not null, "asset" varchar(255) not null, "recipient" varchar(255) not null, "amount" bigint not null, "amount_raw" text not null, "approx_cents" bigint not null, "fee_bps" int not null, "fee_amount" bigint not null, "fee_cents" bigint not null, "cap_charged_cents" bigint not null, "fee_recipient" varchar(255) null, "fee_status" varchar(255) not null, "resource_url" text null, "tx_hash" varchar(255) null, "failure_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "router_payment_user_id_created_at_index" on "router_payment" ("user_id", "created_at");`);
    this.addSql(`create index "router_payment_delegation_id_created_at_index" on "router_payment" ("delegation_id", "created_at");`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_user_id_request_id_unique" unique ("user_id", "request_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "catalog_entry" cascade;`);
    this.addSql(`drop table if exists "router_payment" cascade;`);
  }

}
