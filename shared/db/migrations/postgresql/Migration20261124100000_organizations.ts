import { Migration } from '@mikro-orm/migrations';

export class Migration20261124100000_organizations extends Migration {

  override name = 'Migration20261124100000_organizations';

  override up(): void | Promise<void> {
    this.addSql(`create table "group_budget" ("id" varchar(255) not null, "org_id" varchar(255) not null, "group_id" varchar(255) not null, "currency" varchar(255) not null, "interval" text not null, "spending_limit_cents" bigint not null, "amount_spent_cents" bigint not null default 0, "period_start" timestamptz not null, "period_end" timestamptz null, "alert_threshold_pct" int null, "alerted_period_start" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "group_budget" add constraint "group_budget_group_id_currency_unique" unique ("group_id", "currency");`);

    this.addSql(`create table "group_budget_transaction" ("id" varchar(255) not null, "budget_id" varchar(255) not null, "kind" varchar(255) not null, "amount_cents" bigint not null, "period_start" timestamptz not null, "reference" varchar(255) null, "description" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "group_budget_transaction_budget_id_created_at_index" on "group_budget_transaction" ("budget_id", "created_at");`);

    this.addSql(`create table "org_activity" ("id" varchar(255) not null, "org_id" varchar(255) not null, "event_type" varchar(255) not null, "actor_user_id" varchar(255) null, "subject_type" varchar(255) not null, "subject_id" varchar(255) not null, "details" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "org_activity_org_id_created_at_index" on "org_activity" ("org_id", "created_at");`);

    this.addSql(`create table "organization" ("id" varchar(255) not null, "name" varchar(255) not null, "created_by_user_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "org_group" ("id" varchar(255) not null, "org_id" varchar(255) not null, "name" varchar(255) not null, "active" boolean not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "org_group_org_id_created_at_index" on "org_group" ("org_id", "created_at");`);

    this.addSql(`create table "org_group_member" ("group_id" varchar(255) not null, "membership_id" varchar(255) not null, "org_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("group_id", "membership_id"));`);
    this.addSql(`create index "org_group_member_membership_id_index" on "org_group_member" ("membership_id");`);

    this.addSql(`create table "org_membership" ("id" varchar(255) not null, "org_id" varchar(255) not null, "user_id" varchar(255) not null, "role" text not null, "active" boolean not null, "created_at" timestamptz not null, "removed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "org_membership_user_id_index" on "org_membership" ("user_id");`);
    this.addSql(`alter table "org_membership" add constraint "org_membership_org_id_user_id_unique" unique ("org_id", "user_id");`);

    this.addSql(`create table "org_payment_method" ("id" varchar(255) not null, "org_id" varchar(255) not null, "brand" varchar(255) not null, "last4" varchar(255) not null, "exp_month" int not null, "exp_year" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "org_payment_method_org_id_created_at_index" on "org_payment_method" ("org_id", "created_at");`);

    this.addSql(`create table "org_payment_method_share" ("payment_method_id" varchar(255) not null, "group_id" varchar(255) not null, "org_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("payment_method_id", "group_id"));`);
    this.addSql(`create index "org_payment_method_share_group_id_index" on "org_payment_method_share" ("group_id");`);

    this.addSql(`create table "org_wallet" ("id" varchar(255) not null, "org_id" varchar(255) not null, "label" varchar(255) not null, "address" varchar(255) not null, "wallet_key_enc" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "org_wallet" add constraint "org_wallet_address_unique" unique ("address");`);
    this.addSql(`create index "org_wallet_org_id_created_at_index" on "org_wallet" ("org_id", "created_at");`);

    this.addSql(`create table "org_wallet_share" ("wallet_id" varchar(255) not null, "group_id" varchar(255) not null, "org_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("wallet_id", "group_id"));`);
    this.addSql(`create index "org_wallet_share_group_id_index" on "org_wallet_share" ("group_id");`);

    this.addSql(`alter table "delegation" add "org_wallet_id" varchar(255) null, add "group_id" varchar(255) null;`);

    this.addSql(`alter table "group_budget" add constraint "group_budget_interval_check" check ("interval" in ('month', 'year', 'one_shot'));`);

    this.addSql(`alter table "org_membership" add constraint "org_membership_role_check" check ("role" in ('Admin', 'Member'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "group_budget" cascade;`);
    this.addSql(`drop table if exists "group_budget_transaction" cascade;`);
    this.addSql(`drop table if exists "org_activity" cascade;`);
    this.addSql(`drop table if exists "organization" cascade;`);
    this.addSql(`drop table if exists "org_group" cascade;`);
    this.addSql(`drop table if exists "org_group_member" cascade;`);
    this.addSql(`drop table if exists "org_membership" cascade;`);
    this.addSql(`drop table if exists "org_payment_method" cascade;`);
    this.addSql(`drop table if exists "org_payment_method_share" cascade;`);
    this.addSql(`drop table if exists "org_wallet" cascade;`);
    this.addSql(`drop table if exists "org_wallet_share" cascade;`);

    this.addSql(`alter table "delegation" drop column "org_wallet_id", drop column "group_id";`);
  }

}
