import { Migration } from '@mikro-orm/migrations';

export class Migration20261124070000_oauth_client extends Migration {

  override name = 'Migration20261124070000_oauth_client';

  override up(): void | Promise<void> {
    this.addSql(`create table \`oauth_client\` (\`client_id\` text not null primary key, \`name\` text not null, \`redirect_uris\` text not null, \`verified\` integer not null default false, \`account_level\` integer not null default false, \`allowed_consent_types\` text not null, \`disabled_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`idempotency_key__temp_alter\` (\`id\` text not null primary key, \`user_id\` text not null, \`scope\` text not null, \`key_hash\` text not null, \`fingerprint\` text not null, \`state\` text check (\`state\` in ('running', 'done')) not null, \`response_status\` integer null, \`response\` text null, \`created_at\` datetime not null, \`expires_at\` datetime not null);`);
    this.addSql(`insert into \`idempotency_key__temp_alter\` select \`id\`, \`user_id\`, \`scope\`, \`key_hash\`, \`fingerprint\`, \`state\`, \`response_status\`, \`response\`, \`created_at\`, \`expires_at\` from \`idempotency_key\`;`);
    this.addSql(`drop table \`idempotency_key\`;`);
    this.addSql(`alter table \`idempotency_key__temp_alter\` rename to \`idempotency_key\`;`);
    this.addSql(`create index \`idempotency_key_expires_at_index\` on \`idempotency_key\` (\`expires_at\`);`);
    this.addSql(`create unique index \`idempotency_key_user_id_scope_key_hash_unique\` on \`idempotency_key\` (\`user_id\`, \`scope\`, \`key_hash\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`oauth_client\`;`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`idempotency_key__temp_alter\` (\`id\` TEXT not null primary key, \`user_id\` TEXT not null, \`scope\` TEXT not null, \`key_hash\` TEXT not null, \`fingerprint\` TEXT not null, \`state\` TEXT not null, \`response_status\` INTEGER null, \`response\` TEXT null, \`created_at\` datetime not null, \`expires_at\` datetime not null);`);
    this.addSql(`insert into \`idempotency_key__temp_alter\` select \`id\`, \`user_id\`, \`scope\`, \`key_hash\`, \`fingerprint\`, \`state\`, \`response_status\`, \`response\`, \`created_at\`, \`expires_at\` from \`idempotency_key\`;`);
    this.addSql(`drop table \`idempotency_key\`;`);
    this.addSql(`alter table \`idempotency_key__temp_alter\` rename to \`idempotency_key\`;`);
    this.addSql(`create unique index \`idempotency_key_user_id_scope_key_hash_unique\` on \`idempotency_key\` (\`user_id\`, \`scope\`, \`key_hash\`);`);
    this.addSql(`create index \`idempotency_key_expires_at_index\` on \`idempotency_key\` (\`expires_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

}
