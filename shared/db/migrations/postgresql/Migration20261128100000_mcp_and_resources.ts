import { Migration } from '@mikro-orm/migrations';

export class Migration20261128100000_mcp_and_resources extends Migration {

  override name = 'Migration20261128100000_mcp_and_resources';

  override up(): void | Promise<void> {
    this.addSql(`create table "mcp_session" ("session_hash" varchar(255) not null, "grant_id" varchar(255) not null, "protocol_version" varchar(255) not null, "ended_at" timestamptz null, "created_at" timestamptz not null, primary key ("session_hash"));`);
    this.addSql(`create index "mcp_session_grant_id_index" on "mcp_session" ("grant_id");`);

    this.addSql(`alter table "oauth_client" add "registration" text not null default 'operator', add "metadata_expires_at" timestamptz null;`);
    this.addSql(`alter table "oauth_client" add constraint "oauth_client_registration_check" check ("registration" in ('operator', 'dynamic', 'metadata_document'));`);

    this.addSql(`alter table "oauth_code" add "audience" text not null default 'api';`);
    this.addSql(`alter table "oauth_code" add constraint "oauth_code_audience_check" check ("audience" in ('api', 'mcp'));`);

    this.addSql(`alter table "oauth_device_code" add "audience" text not null default 'api';`);
    this.addSql(`alter table "oauth_device_code" add constraint "oauth_device_code_audience_check" check ("audience" in ('api', 'mcp'));`);

    this.addSql(`alter table "oauth_refresh_token" add "audience" text not null default 'api';`);
    this.addSql(`alter table "oauth_refresh_token" add constraint "oauth_refresh_token_audience_check" check ("audience" in ('api', 'mcp'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "mcp_session" cascade;`);

    this.addSql(`alter table "oauth_client" drop constraint "oauth_client_registration_check";`);
    this.addSql(`alter table "oauth_client" drop column "registration", drop column "metadata_expires_at";`);

    this.addSql(`alter table "oauth_code" drop constraint "oauth_code_audience_check";`);
    this.addSql(`alter table "oauth_code" drop column "audience";`);

    this.addSql(`alter table "oauth_device_code" drop constraint "oauth_device_code_audience_check";`);
    this.addSql(`alter table "oauth_device_code" drop column "audience";`);

    this.addSql(`alter table "oauth_refresh_token" drop constraint "oauth_refresh_token_audience_check";`);
    this.addSql(`alter table "oauth_refresh_token" drop column "audience";`);
  }

}
