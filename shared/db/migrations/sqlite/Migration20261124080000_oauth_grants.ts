import { Migration } from '@mikro-orm/migrations';

export class Migration20261124080000_oauth_grants extends Migration {

  override name = 'Migration20261124080000_oauth_grants';

  override up(): void | Promise<void> {
    this.addSql(`create table \`oauth_code\` (\`code_hash\` text not null primary key, \`grant_id\` text not null, \`client_id\` text not null, \`redirect_uri\` text not null, \`code_challenge\` text not null, \`expires_at\` datetime not null, \`consumed_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`oauth_code_expires_at_index\` on \`oauth_code\` (\`expires_at\`);`);

    this.addSql(`create table \`oauth_device_code\` (\`device_code_hash\` text not null primary key, \`user_code_hash\` text not null, \`client_id\` text not null, \`consent_type\` text check (\`consent_type\` in ('commerce', 'account_access')) not null, \`spending_limit_cents\` bigint not null, \`currency\` text not null, \`duration_secs\` integer not null, \`status\` text check (\`status\` in ('pending', 'approved', 'denied', 'redeemed')) not null, \`user_id\` text null, \`grant_id\` text null, \`interval_secs\` integer not null, \`last_polled_at\` datetime null, \`expires_at\` datetime not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`oauth_device_code_user_code_hash_unique\` on \`oauth_device_code\` (\`user_code_hash\`);`);
    this.addSql(`create index \`oauth_device_code_expires_at_index\` on \`oauth_device_code\` (\`expires_at\`);`);

    this.addSql(`create table \`oauth_grant\` (\`id\` text not null primary key, \`user_id\` text not null, \`client_id\` text not null, \`consent_type\` text check (\`consent_type\` in ('commerce', 'account_access')) not null, \`delegation_id\` text not null, \`status\` text check (\`status\` in ('Active', 'Revoked')) not null, \`revoked_at\` datetime null, \`revoked_reason\` text check (\`revoked_reason\` in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay')) null, \`created_at\` datetime not null, \`last_used_at\` datetime null);`);
    this.addSql(`create index \`oauth_grant_user_id_created_at_index\` on \`oauth_grant\` (\`user_id\`, \`created_at\`);`);

    this.addSql(`create table \`oauth_page_session\` (\`session_hash\` text not null primary key, \`user_id\` text not null, \`last_seen_at\` datetime not null, \`expires_at\` datetime not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`oauth_page_session_expires_at_index\` on \`oauth_page_session\` (\`expires_at\`);`);

    this.addSql(`create table \`oauth_refresh_token\` (\`token_hash\` text not null primary key, \`grant_id\` text not null, \`client_id\` text not null, \`expires_at\` datetime not null, \`rotated_at\` datetime null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`oauth_refresh_token_grant_id_index\` on \`oauth_refresh_token\` (\`grant_id\`);`);
    this.addSql(`create index \`oauth_refresh_token_expires_at_index\` on \`oauth_refresh_token\` (\`expires_at\`);`);

    this.addSql(`create table \`oauth_user_code_attempts\` (\`user_id\` text not null primary key, \`window_started_at\` datetime not null, \`failures\` integer not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`oauth_code\`;`);
    this.addSql(`drop table if exists \`oauth_device_code\`;`);
    this.addSql(`drop table if exists \`oauth_grant\`;`);
    this.addSql(`drop table if exists \`oauth_page_session\`;`);
    this.addSql(`drop table if exists \`oauth_refresh_token\`;`);
    this.addSql(`drop table if exists \`oauth_user_code_attempts\`;`);
  }

}
