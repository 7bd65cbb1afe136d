import { Migration } from '@mikro-orm/migrations';

export class Migration20261124080000_oauth_grants extends Migration {

  override name = 'Migration20261124080000_oauth_grants';

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth_code" ("code_hash" varchar(255) not null, "grant_id" varchar(255) not null, "client_id" varchar(255) not null, "redirect_uri" text not null, "code_challenge" varchar(255) not null, "expires_at" timestamptz not null, "consumed_at" timestamptz null, "created_at" timestamptz not null, primary key ("code_hash"));`);
    this.addSql(`create index "oauth_code_expires_at_index" on "oauth_code" ("expires_at");`);

    this.addSql(`create table "oauth_device_code" ("device_code_hash" varchar(255) not null, "user_code_hash" varchar(255) not null, "client_id" varchar(255) not null, "consent_type" text not null, "spending_limit_cents" bigint not null, "currency" varchar(255) not null, "duration_secs" int not null, "status" text not null, "user_id" varchar(255) null, "grant_id" varchar(255) null, "interval_secs" int not null, "last_polled_at" timestamptz null, "expires_at" timestamptz not null, "created_at" timestamptz not null, primary key ("device_code_hash"));`);
    this.addSql(`alter table "oauth_device_code" add constraint "oauth_device_code_user_code_hash_unique" unique ("user_code_hash");`);
    this.addSql(`create index "oauth_device_code_expires_at_index" on "oauth_device_code" ("expires_at");`);

    this.addSql(`create table "oauth_grant" ("id" varchar(255) not null, "user_id" varchar(255) not null, "client_id" varchar(255) not null, "consent_type" text not null, "delegation_id" varchar(255) not null, "status" text not null, "revoked_at" timestamptz null, "revoked_reason" text null, "created_at" timestamptz not null, "last_used_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "oauth_grant_user_id_created_at_index" on "oauth_grant" ("user_id", "created_at");`);

    this.addSql(`create table "oauth_page_session" ("session_hash" varchar(255) not null, "user_id" varchar(255) not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, primary key ("session_hash"));`);
    this.addSql(`create index "oauth_page_session_expires_at_index" on "oauth_page_session" ("expires_at");`);

    this.addSql(`create table "oauth_refresh_token" ("token_hash" varchar(255) not null, "grant_id" varchar(255) not null, "client_id" varchar(255) not null, "expires_at" timestamptz not null, "rotated_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("token_hash"));`);
    this.addSql(`create index "oauth_refresh_token_grant_id_index" on "oauth_refresh_token" ("grant_id");`);
    this.addSql(`create index "oauth_refresh_token_expires_at_index" on "oauth_refresh_token" ("expires_at");`);

    this.addSql(`create table "oauth_user_code_attempts" ("user_id" varchar(255) not null, "window_started_at" timestamptz not null, "failures" int not null, primary key ("user_id"));`);

    this.addSql(`alter table "oauth_device_code" add constraint "oauth_device_code_consent_type_check" check ("consent_type" in ('commerce', 'account_access'));`);
    this.addSql(`alter table "oauth_device_code" add constraint "oauth_device_code_status_check" check ("status" in ('pending', 'approved', 'denied', 'redeemed'));`);

    this.addSql(`alter table "oauth_grant" add constraint "oauth_grant_consent_type_check" check ("consent_type" in ('commerce', 'account_access'));`);
    this.addSql(`alter table "oauth_grant" add constraint "oauth_grant_status_check" check ("status" in ('Active', 'Revoked'));`);
    this.addSql(`alter table "oauth_grant" add constraint "oauth_grant_revoked_reason_check" check ("revoked_reason" in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_code" cascade;`);
    this.addSql(`drop table if exists "oauth_device_code" cascade;`);
    this.addSql(`drop table if exists "oauth_grant" cascade;`);
    this.addSql(`drop table if exists "oauth_page_session" cascade;`);
    this.addSql(`drop table if exists "oauth_refresh_token" cascade;`);
    this.addSql(`drop table if exists "oauth_user_code_attempts" cascade;`);
  }

}
