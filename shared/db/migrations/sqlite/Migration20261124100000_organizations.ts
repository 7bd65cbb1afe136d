import { Migration } from '@mikro-orm/migrations';

export class Migration20261124100000_organizations extends Migration {

  override name = 'Migration20261124100000_organizations';

  override up(): void | Promise<void> {
    this.addSql(`create table \`group_budget\` (\`id\` text not null primary key, \`org_id\` text not null, \`group_id\` text not null, \`currency\` text not null, \`interval\` text check (\`interval\` in ('month', 'year', 'one_shot')) not null, \`spending_limit_cents\` bigint not null, \`amount_spent_cents\` bigint not null default 0, \`period_start\` datetime not null, \`period_end\` datetime null, \`alert_threshold_pct\` integer null, \`alerted_period_start\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`group_budget_group_id_currency_unique\` on \`group_budget\` (\`group_id\`, \`currency\`);`);

    this.addSql(`create table \`group_budget_transaction\` (\`id\` text not null primary key, \`budget_id\` text not null, \`kind\` text not null, \`amount_cents\` bigint not null, \`period_start\` datetime not null, \`reference\` text null, \`description\` text null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`group_budget_transaction_budget_id_created_at_index\` on \`group_budget_transaction\` (\`budget_id\`, \`created_at\`);`);

    this.addSql(`create table \`org_activity\` (\`id\` text not null primary key, \`org_id\` text not null, \`event_type\` text not null, \`actor_user_id\` text null, \`subject_type\` text not null, \`subject_id\` text not null, \`details\` json not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`org_activity_org_id_created_at_index\` on \`org_activity\` (\`org_id\`, \`created_at\`);`);

    this.addSql(`create table \`organization\` (\`id\` text not null primary key, \`name\` text not null, \`created_by_user_id\` text not null, \`created_at\` datetime not null);`);

    this.addSql(`create table \`org_group\` (\`id\` text not null primary key, \`org_id\` text not null, \`name\` text not null, \`active\` integer not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`org_group_org_id_created_at_index\` on \`org_group\` (\`org_id\`, \`created_at\`);`);

    this.addSql(`create table \`org_group_member\` (\`group_id\` text not null, \`membership_id\` text not null, \`org_id\` text not null, \`created_at\` datetime not null, primary key (\`group_id\`, \`membership_id\`));`);
    this.addSql(`create index \`org_group_member_membership_id_index\` on \`org_group_member\` (\`membership_id\`);`);

    this.addSql(`create table \`org_membership\` (\`id\` text not null primary key, \`org_id\` text not null, \`user_id\` text not null, \`role\` text check (\`role\` in ('Admin', 'Member')) not null, \`active\` integer not null, \`created_at\` datetime not null, \`removed_at\` datetime null);`);
    this.addSql(`create index \`org_membership_user_id_index\` on \`org_membership\` (\`user_id\`);`);
    this.addSql(`create unique index \`org_membership_org_id_user_id_unique\` on \`org_membership\` (\`org_id\`, \`user_id\`);`);

    this.addSql(`create table \`org_payment_method\` (\`id\` text not null primary key, \`org_id\` text not null, \`brand\` text not null, \`last4\` text not null, \`exp_month\` integer not null, \`exp_year\` integer not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`org_payment_method_org_id_created_at_index\` on \`org_payment_method\` (\`org_id\`, \`created_at\`);`);

    this.addSql(`create table \`org_payment_method_share\` (\`payment_method_id\` text not null, \`group_id\` text not null, \`org_id\` text not null, \`created_at\` datetime not null, primary key (\`payment_method_id\`, \`group_id\`));`);
    this.addSql(`create index \`org_payment_method_share_group_id_index\` on \`org_payment_method_share\` (\`group_id\`);`);

    this.addSql(`create table \`org_wallet\` (\`id\` text not null primary key, \`org_id\` text not null, \`label\` text not null, \`address\` text not null, \`wallet_key_enc\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`org_wallet_address_unique\` on \`org_wallet\` (\`address\`);`);
    this.addSql(`create index \`org_wallet_org_id_created_at_index\` on \`org_wallet\` (\`org_id\`, \`created_at\`);`);

    this.addSql(`create table \`org_wallet_share\` (\`wallet_id\` text not null, \`group_id\` text not null, \`org_id\` text not null, \`created_at\` datetime not null, primary key (\`wallet_id\`, \`group_id\`));`);
    this.addSql(`create index \`org_wallet_share_group_id_index\` on \`org_wallet_share\` (\`group_id\`);`);

    this.addSql(`alter table \`delegation\` add column \`org_wallet_id\` text null;`);
    this.addSql(`alter table \`delegation\` add column \`group_id\` text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`group_budget\`;`);
    this.addSql(`drop table if exists \`group_budget_transaction\`;`);
    this.addSql(`drop table if exists \`org_activity\`;`);
    this.addSql(`drop table if exists \`organization\`;`);
    this.addSql(`drop table if exists \`org_group\`;`);
    this.addSql(`drop table if exists \`org_group_member\`;`);
    this.addSql(`drop table if exists \`org_membership\`;`);
    this.addSql(`drop table if exists \`org_payment_method\`;`);
    this.addSql(`drop table if exists \`org_payment_method_share\`;`);
    this.addSql(`drop table if exists \`org_wallet\`;`);
    this.addSql(`drop table if exists \`org_wallet_share\`;`);

    this.addSql(`alter table \`delegation\` drop column \`org_wallet_id\`;`);
    this.addSql(`alter table \`delegation\` drop column \`group_id\`;`);
  }

}
