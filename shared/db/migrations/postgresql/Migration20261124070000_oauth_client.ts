import { Migration } from '@mikro-orm/migrations';

export class Migration20261124070000_oauth_client extends Migration {

  override name = 'Migration20261124070000_oauth_client';

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth_client" ("client_id" varchar(255) not null, "name" varchar(255) not null, "redirect_uris" text not null, "verified" boolean not null default false, "account_level" boolean not null default false, "allowed_consent_types" text not null, "disabled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("client_id"));`);

    this.addSql(`alter table "idempotency_key" alter column "state" type text using ("state"::text);`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_state_check" check ("state" in ('running', 'done'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_client" cascade;`);

    this.addSql(`alter table "idempotency_key" drop constraint "idempotency_key_state_check";`);
    this.addSql(`alter table "idempotency_key" alter column "state" type varchar(255) using ("state"::varchar(255));`);
  }

}
