import { Migration } from '@mikro-orm/migrations';

export class Migration20261121233749_initial extends Migration {

  override name = 'Migration20261121233749_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "agent" ("id" varchar(255) not null, "owner_id" varchar(255) not null, "name" varchar(255) not null, "description" text not null, "tags" jsonb not null, "endpoints" jsonb not null, "agent_definition_url" text not null, "listed" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "agent_owner_id_created_at_index" on "agent" ("owner_id", "created_at");`);

    this.addSql(`create table "agent_plan" ("agent_id" varchar(255) not null, "plan_id" int not null, "created_at" timestamptz not null, primary key ("agent_id", "plan_id"));`);
    this.addSql(`create index "agent_plan_plan_id_index" on "agent_plan" ("plan_id");`);

    this.addSql(`create table "agent_request" ("id" varchar(255) not null, "plan_id" int not null, "agent_id" varchar(255) not null, "holder_address" varchar(255) not null, "max_credits" bigint not null, "burned" bigint not null default 0, "created_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "api_key" ("id" varchar(255) not null, "user_id" varchar(255) not null, "key_hash" varchar(255) not null, "key_prefix" varchar(255) not null, "environment" varchar(255) not null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "api_key_user_id_index" on "api_key" ("user_id");`);
    this.addSql(`alter table "api_key" add constraint "api_key_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "credit_burn" ("id" varchar(255) not null, "agent_request_id" varchar(255) not null, "burn_key" varchar(255) not null, "amount" bigint not null, "tag" varchar(255) null, "description" text null, "status" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "credit_burn" add constraint "credit_burn_agent_request_id_burn_key_unique" unique ("agent_request_id", "burn_key");`);

    this.addSql(`create table "credit_ledger" ("id" varchar(255) not null, "plan_id" int not null, "holder_address" varchar(255) not null, "delta" bigint not null, "kind" varchar(255) not null, "reference" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_ledger_plan_id_holder_address_created_at_index" on "credit_ledger" ("plan_id", "holder_address", "created_at");`);

    this.addSql(`create table "credit_lot" ("id" varchar(255) not null, "plan_id" int not null, "holder_address" varchar(255) not null, "remaining" bigint not null, "expires_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_lot_plan_id_holder_address_index" on "credit_lot" ("plan_id", "holder_address");`);

    this.addSql(`create table "delegation" ("id" varchar(255) not null, "user_id" varchar(255) not null, "provider" varchar(255) not null, "status" varchar(255) not null, "currency" varchar(255) not null, "spending_limit_cents" bigint not null, "amount_spent_cents" bigint not null default 0, "transaction_count" int not null default 0, "allowed_recipients" jsonb null, "plan_id" int null, "api_key_id" varchar(255) null, "provider_payment_method_id" varchar(255) null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "delegation_user_id_created_at_index" on "delegation" ("user_id", "created_at");`);

    this.addSql(`create table "delegation_transaction" ("id" varchar(255) not null, "delegation_id" varchar(255) not null, "kind" varchar(255) not null, "amount_cents" bigint not null, "reference" varchar(255) null, "description" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "delegation_transaction_delegation_id_created_at_index" on "delegation_transaction" ("delegation_id", "created_at");`);

    this.addSql(`create table "plan" ("id" serial primary key, "owner_id" varchar(255) not null, "name" varchar(255) not null, "description" text not null, "price_type" varchar(255) not null, "token_address" varchar(255) not null, "amounts" jsonb not null, "receivers" jsonb not null, "credits_type" varchar(255) not null, "credits_amount" bigint not null, "credits_min_amount" bigint not null, "access_limit" varchar(255) not null, "listed" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`create index "plan_owner_id_created_at_index" on "plan" ("owner_id", "created_at");`);

    this.addSql(`create table "plan_order" ("id" varchar(255) not null, "plan_id" int not null, "buyer_user_id" varchar(255) not null, "buyer_address" varchar(255) not null, "asset" varchar(255) not null, "amount_paid" bigint not null, "credits" bigint not null, "tx_id" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "plan_order_buyer_user_id_created_at_index" on "plan_order" ("buyer_user_id", "created_at");`);

    this.addSql(`create table "service_wallet" ("name" varchar(255) not null, "address" varchar(255) not null, "key_enc" text not null, "created_at" timestamptz not null, primary key ("name"));`);

    this.addSql(`create table "signing_key" ("kid" varchar(255) not null, "public_jwk" text not null, "private_key_enc" text not null, "activates_at" timestamptz not null, "retires_at" timestamptz null, "created_at" timestamptz not null, primary key ("kid"));`);

    this.addSql(`create table "token_balance" ("address" varchar(255) not null, "asset" varchar(255) not null, "balance" bigint not null default 0, "updated_at" timestamptz not null, primary key ("address", "asset"));`);

    this.addSql(`create table "token_ledger" ("id" varchar(255) not null, "tx_id" varchar(255) not null, "address" varchar(255) not null, "asset" varchar(255) not null, "delta" bigint not null, "kind" varchar(255) not null, "reference" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "token_ledger_address_asset_created_at_index" on "token_ledger" ("address", "asset", "created_at");`);
    this.addSql(`create index "token_ledger_tx_id_index" on "token_ledger" ("tx_id");`);

    this.addSql(`create table "app_user" ("id" varchar(255) not null, "email" varchar(255) not null, "wallet_address" varchar(255) not null, "wallet_key_enc" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_email_unique" unique ("email");`);
    this.addSql(`alter table "app_user" add constraint "app_user_wallet_address_unique" unique ("wallet_address");`);

    this.addSql(`create table "x402_permission" ("permission_hash" varchar(255) not null, "user_id" varchar(255) not null, "owner_address" varchar(255) not null, "scheme" varchar(255) not null, "network" varchar(255) not null, "plan_id" int not null, "agent_id" varchar(255) null, "http_verb" varchar(255) null, "resource_url" text not null, "resource_description" text null, "delegation_id" varchar(255) null, "nonce" varchar(255) not null, "signature" varchar(255) not null, "status" varchar(255) not null, "used_credits" bigint not null default 0, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("permission_hash"));`);
    this.addSql(`create index "x402_permission_user_id_created_at_index" on "x402_permission" ("user_id", "created_at");`);

    this.addSql(`create table "x402_settlement" ("id" varchar(255) not null, "permission_hash" varchar(255) not null, "agent_request_id" varchar(255) not null, "credits_redeemed" bigint not null, "order_id" varchar(255) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "x402_settlement" add constraint "x402_settlement_permission_hash_agent_request_id_unique" unique ("permission_hash", "agent_request_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "agent" cascade;`);
    this.addSql(`drop table if exists "agent_plan" cascade;`);
    this.addSql(`drop table if exists "agent_request" cascade;`);
    this.addSql(`drop table if exists "api_key" cascade;`);
    this.addSql(`drop table if exists "credit_burn" cascade;`);
    this.addSql(`drop table if exists "credit_ledger" cascade;`);
    this.addSql(`drop table if exists "credit_lot" cascade;`);
    this.addSql(`drop table if exists "delegation" cascade;`);
    this.addSql(`drop table if exists "delegation_transaction" cascade;`);
    this.addSql(`drop table if exists "plan" cascade;`);
    this.addSql(`drop table if exists "plan_order" cascade;`);
    this.addSql(`drop table if exists "service_wallet" cascade;`);
    this.addSql(`drop table if exists "signing_key" cascade;`);
    this.addSql(`drop table if exists "token_balance" cascade;`);
    this.addSql(`drop table if exists "token_ledger" cascade;`);
    this.addSql(`drop table if exists "app_user" cascade;`);
    this.addSql(`drop table if exists "x402_permission" cascade;`);
    this.addSql(`drop table if exists "x402_settlement" cascade;`);
  }

}
