import { Migration } from '@mikro-orm/migrations';

export class Migration20261124110000_chain_settlement extends Migration {

  override name = 'Migration20261124110000_chain_settlement';

  override up(): void | Promise<void> {
    this.addSql(`create table \`chain_balance\` (\`address\` text not null, \`asset\` text not null, \`balance\` bigint not null default 0, \`block\` bigint not null default -1, \`reserved\` bigint not null default 0, \`refreshed_at\` datetime null, primary key (\`address\`, \`asset\`));`);

    this.addSql(`create table \`chain_reservation\` (\`id\` text not null primary key, \`address\` text not null, \`asset\` text not null, \`amount\` bigint not null, \`kind\` text not null, \`reference\` text not null, \`auth_nonce\` text null, \`valid_before\` bigint null, \`from_block\` bigint not null, \`status\` text check (\`status\` in ('open', 'spent', 'reflected', 'released')) not null, \`spent_block\` bigint null, \`tx_hash\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`chain_reservation_address_asset_status_index\` on \`chain_reservation\` (\`address\`, \`asset\`, \`status\`);`);
    this.addSql(`create index \`chain_reservation_open_index\` on \`chain_reservation\` (\`created_at\`) where status = 'open';`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`router_payment__temp_alter\` (\`id\` text not null primary key, \`user_id\` text not null, \`api_key_id\` text null, \`grant_id\` text null, \`client_id\` text null, \`request_scope\` text not null default '', \`request_id\` text null, \`delegation_id\` text not null, \`mode\` text not null, \`protocol\` text not null, \`x402version\` integer null, \`status\` text check (\`status\` in ('Issued', 'Settled', 'Failed', 'Pending', 'Expired')) not null, \`scheme\` text not null, \`network\` text not null, \`asset\` text not null, \`recipient\` text not null, \`amount\` bigint not null, \`amount_raw\` text not null, \`approx_cents\` bigint not null, \`fee_bps\` integer not null, \`fee_amount\` bigint not null, \`fee_cents\` bigint not null, \`cap_charged_cents\` bigint not null, \`fee_recipient\` text null, \`fee_status\` text check (\`fee_status\` in ('none', 'reserved', 'settled', 'released')) not null, \`resource_url\` text null, \`tx_hash\` text null, \`fee_tx_hash\` text null, \`failure_reason\` text null, \`auth_nonce\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`insert into \`router_payment__temp_alter\` select \`id\`, \`user_id\`, \`api_key_id\`, \`grant_id\`, \`client_id\`, \`request_scope\`, \`request_id\`, \`delegation_id\`, \`mode\`, \`protocol\`, \`x402version\`, \`status\`, \`scheme\`, \`network\`, \`asset\`, \`recipient\`, \`amount\`, \`amount_raw\`, \`approx_cents\`, \`fee_bps\`, \`fee_amount\`, \`fee_cents\`, \`cap_charged_cents\`, \`fee_recipient\`, \`fee_status\`, \`resource_url\`, \`tx_hash\`, null as \`fee_tx_hash\`, \`failure_reason\`, \`auth_nonce\`, \`created_at\`, \`updated_at\` from \`router_payment\`;`);
    this.addSql(`drop table \`router_payment\`;`);
    this.addSql(`alter table \`router_payment__temp_alter\` rename to \`router_payment\`;`);
    this.addSql(`create index \`router_payment_user_id_created_at_index\` on \`router_payment\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_grant_id_created_at_index\` on \`router_payment\` (\`grant_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_delegation_id_created_at_index\` on \`router_payment\` (\`delegation_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_fee_reserved_index\` on \`router_payment\` (\`created_at\`) where fee_status = 'reserved';`);
    this.addSql(`create unique index \`router_payment_user_id_request_scope_request_id_unique\` on \`router_payment\` (\`user_id\`, \`request_scope\`, \`request_id\`);`);
    this.addSql(`create unique index \`router_payment_user_id_auth_nonce_unique\` on \`router_payment\` (\`user_id\`, \`auth_nonce\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`chain_balance\`;`);
    this.addSql(`drop table if exists \`chain_reservation\`;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`router_payment__temp_alter\` (\`id\` TEXT not null primary key, \`user_id\` TEXT not null, \`api_key_id\` TEXT null, \`grant_id\` TEXT null, \`client_id\` TEXT null, \`request_scope\` TEXT not null default '', \`request_id\` TEXT null, \`delegation_id\` TEXT not null, \`mode\` TEXT not null, \`protocol\` TEXT not null, \`x402version\` INTEGER null, \`status\` TEXT check (\`status\` in ('Issued', 'Settled', 'Failed', 'Pending')) not null, \`scheme\` TEXT not null, \`network\` TEXT not null, \`asset\` TEXT not null, \`recipient\` TEXT not null, \`amount\` bigint not null, \`amount_raw\` TEXT not null, \`approx_cents\` bigint not null, \`fee_bps\` INTEGER not null, \`fee_amount\` bigint not null, \`fee_cents\` bigint not null, \`cap_charged_cents\` bigint not null, \`fee_recipient\` TEXT null, \`fee_status\` TEXT check (\`fee_status\` in ('none', 'reserved', 'settled', 'released')) not null, \`resource_url\` TEXT null, \`tx_hash\` TEXT null, \`failure_reason\` TEXT null, \`auth_nonce\` TEXT null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`insert into \`router_payment__temp_alter\` select \`id\`, \`user_id\`, \`api_key_id\`, \`grant_id\`, \`client_id\`, \`request_scope\`, \`request_id\`, \`delegation_id\`, \`mode\`, \`protocol\`, \`x402version\`, \`status\`, \`scheme\`, \`network\`, \`asset\`, \`recipient\`, \`amount\`, \`amount_raw\`, \`approx_cents\`, \`fee_bps\`, \`fee_amount\`, \`fee_cents\`, \`cap_charged_cents\`, \`fee_recipient\`, \`fee_status\`, \`resource_url\`, \`tx_hash\`, \`failure_reason\`, \`auth_nonce\`, \`created_at\`, \`updated_at\` from \`router_payment\`;`);
    this.addSql(`drop table \`router_payment\`;`);
    this.addSql(`alter table \`router_payment__temp_alter\` rename to \`router_payment\`;`);
    this.addSql(`create unique index \`router_payment_user_id_auth_nonce_unique\` on \`router_payment\` (\`user_id\`, \`auth_nonce\`);`);
    this.addSql(`create unique index \`router_payment_user_id_request_scope_request_id_unique\` on \`router_payment\` (\`user_id\`, \`request_scope\`, \`request_id\`);`);
    this.addSql(`create index \`router_payment_fee_reserved_index\` on \`router_payment\` (\`created_at\`) where fee_status = 'reserved';`);
    this.addSql(`create index \`router_payment_delegation_id_created_at_index\` on \`router_payment\` (\`delegation_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_grant_id_created_at_index\` on \`router_payment\` (\`grant_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_user_id_created_at_index\` on \`router_payment\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

}
