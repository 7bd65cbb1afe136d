import { Migration } from '@mikro-orm/migrations';

export class Migration20261124110000_chain_settlement extends Migration {

  override name = 'Migration20261124110000_chain_settlement';

  override up(): void | Promise<void> {
    this.addSql(`create table "chain_balance" ("address" varchar(255) not null, "asset" varchar(255) not null, "balance" bigint not null default 0, "block" bigint not null default -1, "reserved" bigint not null default 0, "refreshed_at" timestamptz null, primary key ("address", "asset"));`);

    this.addSql(`create table "chain_reservation" ("id" varchar(255) not null, "address" varchar(255) not null, "asset" varchar(255) not null, "amount" bigint not null, "kind" varchar(255) not null, "reference" varchar(255) not null, "auth_nonce" varchar(255) null, "valid_before" bigint null, "from_block" bigint not null, "status" text not null, "spent_block" bigint null, "tx_hash" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chain_reservation_address_asset_status_index" on "chain_reservation" ("address", "asset", "status");`);
    this.addSql(`create index "chain_reservation_open_index" on "chain_reservation" ("created_at") where status = 'open';`);

    this.addSql(`alter table "router_payment" drop constraint "router_payment_status_check";`);
    this.addSql(`alter table "router_payment" add "fee_tx_hash" varchar(255) null;`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_status_check" check ("status" in ('Issued', 'Settled', 'Failed', 'Pending', 'Expired'));`);

    this.addSql(`alter table "chain_reservation" add constraint "chain_reservation_status_check" check ("status" in ('open', 'spent', 'reflected', 'released'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chain_balance" cascade;`);
    this.addSql(`drop table if exists "chain_reservation" cascade;`);

    this.addSql(`alter table "router_payment" drop constraint "router_payment_status_check";`);
    this.addSql(`alter table "router_payment" drop column "fee_tx_hash";`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_status_check" check ("status" in ('Issued', 'Settled', 'Failed', 'Pending'));`);
  }

}
