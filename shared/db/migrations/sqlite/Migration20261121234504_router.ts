import { Migration } from '@mikro-orm/migrations';

export class Migration20261121234504_router extends Migration {

  override name = 'Migration20261121234504_router';

  override up(): void | Promise<void> {
    this.addSql(`create table \`catalog_entry\` (\`slug\` text not null primary key, \`upstream_url\` text not null, \`created_at\` datetime not null);`);

    this.addSql(`create table \`router_payment\` (\`id\` text not null primary key, \`user_id\` text not null, \`api_key_id\` text not null, \`request_id\` text null, \`delegation_id\` text not null, \`mode\` text not null, \`protocol\` text not null, \`x402version\` integer null, \`status\` text not null, \`scheme\` text not null, \`network\` text not null, \`asset\` text not null, \`recipient\` text not null, \`amount\` bigint not null, \`amount_raw\` text not null, \`approx_cents\` bigint not null, \`fee_bps\` integer not null, \`fee_amount\` bigint not null, \`fee_cents\` bigint not null, \`cap_charged_cents\` bigint not null, \`fee_recipient\` text null, \`fee_status\` text not null, \`resource_url\` text null, \`tx_hash\` text null, \`failure_reason\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`router_payment_user_id_created_at_index\` on \`router_payment\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`create index \`router_payment_delegation_id_created_at_index\` on \`router_payment\` (\`delegation_id\`, \`created_at\`);`);
    this.addSql(`create unique index \`router_payment_user_id_request_id_unique\` on \`router_payment\` (\`user_id\`, \`request_id\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`catalog_entry\`;`);
    this.addSql(`drop table if exists \`router_payment\`;`);
  }

}
