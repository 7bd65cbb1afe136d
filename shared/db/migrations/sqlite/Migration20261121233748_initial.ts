import { Migration } from '@mikro-orm/migrations';

export class Migration20261121233748_initial extends Migration {

  override name = 'Migration20261121233748_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table \`agent\` (\`id\` text not null primary key, \`owner_id\` text not null, \`name\` text not null, \`description\` text not null, \`tags\` json not null, \`endpoints\` json not null, \`agent_definition_url\` text not null, \`listed\` integer not null default true, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`agent_owner_id_created_at_index\` on \`agent\` (\`owner_id\`, \`created_at\`);`);

    this.addSql(`create table \`agent_plan\` (\`agent_id\` text not null, \`plan_id\` integer not null, \`created_at\` datetime not null, primary key (\`agent_id\`, \`plan_id\`));`);
    this.addSql(`create index \`agent_plan_plan_id_index\` on \`agent_plan\` (\`plan_id\`);`);

    this.addSql(`create table \`agent_request\` (\`id\` text not null primary key, \`plan_id\` integer not null, \`agent_id\` text not null, \`holder_address\` text not null, \`max_credits\` bigint not null, \`burned\` bigint not null default 0, \`created_at\` datetime not null);`);

    this.addSql(`create table \`api_key\` (\`id\` text not null primary key, \`user_id\` text not null, \`key_hash\` text not null, \`key_prefix\` text not null, \`environment\` text not null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`api_key_user_id_index\` on \`api_key\` (\`user_id\`);`);
    this.addSql(`create unique index \`api_key_key_hash_unique\` on \`api_key\` (\`key_hash\`);`);

    this.addSql(`create table \`credit_burn\` (\`id\` text not null primary key, \`agent_request_id\` text not null, \`burn_key\` text not null, \`amount\` bigint not null, \`tag\` text null, \`description\` text null, \`status\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`credit_burn_agent_request_id_burn_key_unique\` on \`credit_burn\` (\`agent_request_id\`, \`burn_key\`);`);

    this.addSql(`create table \`credit_ledger\` (\`id\` text not null primary key, \`plan_id\` integer not null, \`holder_address\` text not null, \`delta\` bigint not null, \`kind\` text not null, \`reference\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`credit_ledger_plan_id_holder_address_created_at_index\` on \`credit_ledger\` (\`plan_id\`, \`holder_address\`, \`created_at\`);`);

    this.addSql(`create table \`credit_lot\` (\`id\` text not null primary key, \`plan_id\` integer not null, \`holder_address\` text not null, \`remaining\` bigint not null, \`expires_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`credit_lot_plan_id_holder_address_index\` on \`credit_lot\` (\`plan_id\`, \`holder_address\`);`);

    this.addSql(`create table \`delegation\` (\`id\` text not null primary key, \`user_id\` text not null, \`provider\` text not null, \`status\` text not null, \`currency\` text not null, \`spending_limit_cents\` bigint not null, \`amount_spent_cents\` bigint not null default 0, \`transaction_count\` integer not null default 0, \`allowed_recipients\` json null, \`plan_id\` integer null, \`api_key_id\` text null, \`provider_payment_method_id\` text null, \`expires_at\` datetime not null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`delegation_user_id_created_at_index\` on \`delegation\` (\`user_id\`, \`created_at\`);`);

    this.addSql(`create table \`delegation_transaction\` (\`id\` text not null primary key, \`delegation_id\` text not null, \`kind\` text not null, \`amount_cents\` bigint not null, \`reference\` text null, \`description\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`delegation_transaction_delegation_id_created_at_index\` on \`delegation_transaction\` (\`delegation_id\`, \`created_at\`);`);

    this.addSql(`create table \`plan\` (\`id\` integer not null primary key autoincrement, \`owner_id\` text not null, \`name\` text not null, \`description\` text not null, \`price_type\` text not null, \`token_address\` text not null, \`amounts\` json not null, \`receivers\` json not null, \`credits_type\` text not null, \`credits_amount\` bigint not null, \`credits_min_amount\` bigint not null, \`access_limit\` text not null, \`listed\` integer not null default true, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`plan_owner_id_created_at_index\` on \`plan\` (\`owner_id\`, \`created_at\`);`);

    this.addSql(`create table \`plan_order\` (\`id\` text not null primary key, \`plan_id\` integer not null, \`buyer_user_id\` text not null, \`buyer_address\` text not null, \`asset\` text not null, \`amount_paid\` bigint not null, \`credits\` bigint not null, \`tx_id\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`plan_order_buyer_user_id_created_at_index\` on \`plan_order\` (\`buyer_user_id\`, \`created_at\`);`);

    this.addSql(`create table \`service_wallet\` (\`name\` text not null primary key, \`address\` text not null, \`key_enc\` text not null, \`created_at\` datetime not null);`);

    this.addSql(`create table \`signing_key\` (\`kid\` text not null primary key, \`public_jwk\` text not null, \`private_key_enc\` text not null, \`activates_at\` datetime not null, \`retires_at\` datetime null, \`created_at\` datetime not null);`);

    this.addSql(`create table \`token_balance\` (\`address\` text not null, \`asset\` text not null, \`balance\` bigint not null default 0, \`updated_at\` datetime not null, primary key (\`address\`, \`asset\`));`);

    this.addSql(`create table \`token_ledger\` (\`id\` text not null primary key, \`tx_id\` text not null, \`address\` text not null, \`asset\` text not null, \`delta\` bigint not null, \`kind\` text not null, \`reference\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`token_ledger_address_asset_created_at_index\` on \`token_ledger\` (\`address\`, \`asset\`, \`created_at\`);`);
    this.addSql(`create index \`token_ledger_tx_id_index\` on \`token_ledger\` (\`tx_id\`);`);

    this.addSql(`create table \`app_user\` (\`id\` text not null primary key, \`email\` text not null, \`wallet_address\` text not null, \`wallet_key_enc\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`app_user_email_unique\` on \`app_user\` (\`email\`);`);
    this.addSql(`create unique index \`app_user_wallet_address_unique\` on \`app_user\` (\`wallet_address\`);`);

    this.addSql(`create table \`x402_permission\` (\`permission_hash\` text not null primary key, \`user_id\` text not null, \`owner_address\` text not null, \`scheme\` text not null, \`network\` text not null, \`plan_id\` integer not null, \`agent_id\` text null, \`http_verb\` text null, \`resource_url\` text not null, \`resource_description\` text null, \`delegation_id\` text null, \`nonce\` text not null, \`signature\` text not null, \`status\` text not null, \`used_credits\` bigint not null default 0, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`x402_permission_user_id_created_at_index\` on \`x402_permission\` (\`user_id\`, \`created_at\`);`);

    this.addSql(`create table \`x402_settlement\` (\`id\` text not null primary key, \`permission_hash\` text not null, \`agent_request_id\` text not null, \`credits_redeemed\` bigint not null, \`order_id\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`x402_settlement_permission_hash_agent_request_id_unique\` on \`x402_settlement\` (\`permission_hash\`, \`agent_request_id\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`agent\`;`);
    this.addSql(`drop table if exists \`agent_plan\`;`);
    this.addSql(`drop table if exists \`agent_request\`;`);
    this.addSql(`drop table if exists \`api_key\`;`);
    this.addSql(`drop table if exists \`credit_burn\`;`);
    this.addSql(`drop table if exists \`credit_ledger\`;`);
    this.addSql(`drop table if exists \`credit_lot\`;`);
    this.addSql(`drop table if exists \`delegation\`;`);
    this.addSql(`drop table if exists \`delegation_transaction\`;`);
    this.addSql(`drop table if exists \`plan\`;`);
    this.addSql(`drop table if exists \`plan_order\`;`);
    this.addSql(`drop table if exists \`service_wallet\`;`);
    this.addSql(`drop table if exists \`signing_key\`;`);
    this.addSql(`drop table if exists \`token_balance\`;`);
    this.addSql(`drop table if exists \`token_ledger\`;`);
    this.addSql(`drop table if exists \`app_user\`;`);
    this.addSql(`drop table if exists \`x402_permission\`;`);
    this.addSql(`drop table if exists \`x402_settlement\`;`);
  }

}
