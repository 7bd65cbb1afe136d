import { Migration } from '@mikro-orm/migrations';

export class Migration20261124060000_status_enums extends Migration {

  override name = 'Migration20261124060000_status_enums';

  override up(): void | Promise<void> {
    // Rows written with a status outside the lists below would make the constraints refuse the migration. Each is
    // mapped to the state the code already gave it: a delegation or permission whose status is not Active was
    // refused every spend and settle (`status = 'Active'` in their conditional UPDATEs), so it becomes Revoked;
    // a payment in no known state could never move again (every transition starts from Issued), so it becomes
    // Failed and keeps its old status in failure_reason; a fee leg only ever moves from reserved, so an unknown one
    // is terminal: settled (what moved is in the journals, not in this column).
    this.addSql(`update \`delegation\` set \`status\` = 'Revoked' where \`status\` not in ('Active', 'Revoked');`);
    this.addSql(`update \`x402_permission\` set \`status\` = 'Revoked' where \`status\` not in ('Active', 'Revoked');`);
    this.addSql(`update \`router_payment\` set \`failure_reason\` = coalesce(\`failure_reason\`, 'stored status ' || substr(\`status\`, 1, 64) || ' is not a payment status'), \`status\` = 'Failed' where \`status\` not in ('Issued', 'Settled', 'Failed', 'Pending');`);
    this.addSql(`update \`router_payment\` set \`fee_status\` = 'settled' where \`fee_status\` not in ('none', 'reserved', 'settled', 'released');`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`delegation__temp_alter\` (\`id\` text not null primary key, \`user_id\` text not null, \`provider\` text not null, \`status\` text check (\`status\` in ('Active', 'Revoked')) not null, \`currency\` text not null, \`spending_limit_cents\` bigint not null, \`amount_spent_cents\` bigint not null default 0, \`transaction_count\` integer not null default 0, \`allowed_recipients\` json null, \`plan_id\` integer null, \`api_key_id\` text null, \`provider_payment_method_id\` text null, \`expires_at\` datetime not null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`delegation__temp_alter\` select \`id\`, \`user_id\`, \`provider\`, \`status\`, \`currency\`, \`spending_limit_cents\`, \`amount_spent_cents\`, \`transaction_count\`, \`allowed_recipients\`, \`plan_id\`, \`api_key_id\`, \`provider_payment_method_id\`, \`expires_at\`, \`revoked_at\`, \`created_at\` from \`delegation\`;`);
    this.addSql(`drop table \`delegation\`;`);
    this.addSql(`alter table \`delegation__temp_alter\` rename to \`delegation\`;`);
    this.addSql(`create index \`delegation_user_id_created_at_index\` on \`delegation\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`router_payment__temp_alter\` (\`id\` text not null primary key, \`user_id\` text not null, \`api_key_id\` text not null, \`request_id\` text null, \`delegation_id\` text not null, \`mode\` text not null, \`protocol\` text not null, \`x402version\` integer null, \`status\` text check (\`status\` in ('Issued', 'Settled', 'Failed', 'Pending')) not null, \`scheme\` text not null, \`network\` text not null, \`asset\` text not null, \`recipient\` text not null, \`amount\` bigint not null, \`amount_raw\` text not null, \`approx_cents\` bigint not null, \`fee_bps\` integer not null, \`fee_amount\` bigint not null, \`fee_cents\` bigint not null, \`cap_charged_cents\` bigint not null, \`fee_recipient\` text null, \`fee_status\` text check (\`fee_status\` in ('none', 'reserved', 'settled', 'released')) not null, \`resource_url\` text null, \`tx_hash\` text null, \`failure_reason\` text null, \`auth_nonce\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`insert into \`router_payment__temp_alter\` select \`id\`, \`user_id\`, \`api_key_id\`, \`request_id\`, \`delegation_id\`, \`mode\`, \`protocol\`, \`x402version\`, \`status\`, \`scheme\`, \`network\`, \`asset\`, \`recipient\`, \`amount\`, \`amount_raw\`, \`approx_cents\`, \`fee_bps\`, \`fee_amount\`, \`fee_cents\`, \`cap_charged_cents\`, \`fee_recipient\`, \`fee_status\`, \`resource_url\`, \`tx_hash\`, \`failure_reason\`, \`auth_nonce\`, \`created_at\`, \`updated_at\` from \`router_payment\`;`);
    this.addSql(`drop table \`router_payment\`;`);
    this.addSql(`alter table \`router_payment__temp_alter\` rename to \`router_payment\`;`);
    this.addSql(`create index \`router_payment_user_id_created_at_index\` on \`router_payment\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_delegation_id_created_at_index\` on \`router_payment\` (\`delegation_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_fee_reserved_index\` on \`router_payment\` (\`created_at\`) where fee_status = 'reserved';`);
    this.addSql(`create unique index \`router_payment_user_id_request_id_unique\` on \`router_payment\` (\`user_id\`, \`request_id\`);`);
    this.addSql(`create unique index \`router_payment_user_id_auth_nonce_unique\` on \`router_payment\` (\`user_id\`, \`auth_nonce\`);`);
    this.addSql(`pragma foreign_keys = on;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`x402_permission__temp_alter\` (\`permission_hash\` text not null primary key, \`user_id\` text not null, \`owner_address\` text not null, \`scheme\` text not null, \`network\` text not null, \`plan_id\` integer not null, \`agent_id\` text null, \`http_verb\` text null, \`resource_url\` text not null, \`resource_description\` text null, \`delegation_id\` text null, \`nonce\` text not null, \`signature_hash\` text not null, \`status\` text check (\`status\` in ('Active', 'Revoked')) not null, \`used_credits\` bigint not null default 0, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`x402_permission__temp_alter\` select \`permission_hash\`, \`user_id\`, \`owner_address\`, \`scheme\`, \`network\`, \`plan_id\`, \`agent_id\`, \`http_verb\`, \`resource_url\`, \`resource_description\`, \`delegation_id\`, \`nonce\`, \`signature_hash\`, \`status\`, \`used_credits\`, \`revoked_at\`, \`created_at\` from \`x402_permission\`;`);
    this.addSql(`drop table \`x402_permission\`;`);
    this.addSql(`alter table \`x402_permission__temp_alter\` rename to \`x402_permission\`;`);
    this.addSql(`create index \`x402_permission_user_id_created_at_index\` on \`x402_permission\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`delegation__temp_alter\` (\`id\` TEXT not null primary key, \`user_id\` TEXT not null, \`provider\` TEXT not null, \`status\` TEXT not null, \`currency\` TEXT not null, \`spending_limit_cents\` bigint not null, \`amount_spent_cents\` bigint not null default 0, \`transaction_count\` INTEGER not null default 0, \`allowed_recipients\` json null, \`plan_id\` INTEGER null, \`api_key_id\` TEXT null, \`provider_payment_method_id\` TEXT null, \`expires_at\` datetime not null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`delegation__temp_alter\` select \`id\`, \`user_id\`, \`provider\`, \`status\`, \`currency\`, \`spending_limit_cents\`, \`amount_spent_cents\`, \`transaction_count\`, \`allowed_recipients\`, \`plan_id\`, \`api_key_id\`, \`provider_payment_method_id\`, \`expires_at\`, \`revoked_at\`, \`created_at\` from \`delegation\`;`);
    this.addSql(`drop table \`delegation\`;`);
    this.addSql(`alter table \`delegation__temp_alter\` rename to \`delegation\`;`);
    this.addSql(`create index \`delegation_user_id_created_at_index\` on \`delegation\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`router_payment__temp_alter\` (\`id\` TEXT not null primary key, \`user_id\` TEXT not null, \`api_key_id\` TEXT not null, \`request_id\` TEXT null, \`delegation_id\` TEXT not null, \`mode\` TEXT not null, \`protocol\` TEXT not null, \`x402version\` INTEGER null, \`status\` TEXT not null, \`scheme\` TEXT not null, \`network\` TEXT not null, \`asset\` TEXT not null, \`recipient\` TEXT not null, \`amount\` bigint not null, \`amount_raw\` TEXT not null, \`approx_cents\` bigint not null, \`fee_bps\` INTEGER not null, \`fee_amount\` bigint not null, \`fee_cents\` bigint not null, \`cap_charged_cents\` bigint not null, \`fee_recipient\` TEXT null, \`fee_status\` TEXT not null, \`resource_url\` TEXT null, \`tx_hash\` TEXT null, \`failure_reason\` TEXT null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`auth_nonce\` TEXT null);`);
    this.addSql(`insert into \`router_payment__temp_alter\` select \`id\`, \`user_id\`, \`api_key_id\`, \`request_id\`, \`delegation_id\`, \`mode\`, \`protocol\`, \`x402version\`, \`status\`, \`scheme\`, \`network\`, \`asset\`, \`recipient\`, \`amount\`, \`amount_raw\`, \`approx_cents\`, \`fee_bps\`, \`fee_amount\`, \`fee_cents\`, \`cap_charged_cents\`, \`fee_recipient\`, \`fee_status\`, \`resource_url\`, \`tx_hash\`, \`failure_reason\`, \`created_at\`, \`updated_at\`, \`auth_nonce\` from \`router_payment\`;`);
    this.addSql(`drop table \`router_payment\`;`);
    this.addSql(`alter table \`router_payment__temp_alter\` rename to \`router_payment\`;`);
    this.addSql(`create index \`router_payment_fee_reserved_index\` on \`router_payment\` (\`created_at\`) where fee_status = 'reserved';`);
    this.addSql(`create unique index \`router_payment_user_id_auth_nonce_unique\` on \`router_payment\` (\`user_id\`, \`auth_nonce\`);`);
    this.addSql(`create unique index \`router_payment_user_id_request_id_unique\` on \`router_payment\` (\`user_id\`, \`request_id\`);`);
    this.addSql(`create index \`router_payment_delegation_id_created_at_index\` on \`router_payment\` (\`delegation_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_user_id_created_at_index\` on \`router_payment\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`x402_permission__temp_alter\` (\`permission_hash\` TEXT not null primary key, \`user_id\` TEXT not null, \`owner_address\` TEXT not null, \`scheme\` TEXT not null, \`network\` TEXT not null, \`plan_id\` INTEGER not null, \`agent_id\` TEXT null, \`http_verb\` TEXT null, \`resource_url\` TEXT not null, \`resource_description\` TEXT null, \`delegation_id\` TEXT null, \`nonce\` TEXT not null, \`signature_hash\` TEXT not null, \`status\` TEXT not null, \`used_credits\` bigint not null default 0, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`x402_permission__temp_alter\` select \`permission_hash\`, \`user_id\`, \`owner_address\`, \`scheme\`, \`network\`, \`plan_id\`, \`agent_id\`, \`http_verb\`, \`resource_url\`, \`resource_description\`, \`delegation_id\`, \`nonce\`, \`signature_hash\`, \`status\`, \`used_credits\`, \`revoked_at\`, \`created_at\` from \`x402_permission\`;`);
    this.addSql(`drop table \`x402_permission\`;`);
    this.addSql(`alter table \`x402_permission__temp_alter\` rename to \`x402_permission\`;`);
    this.addSql(`create index \`x402_permission_user_id_created_at_index\` on \`x402_permission\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

}
