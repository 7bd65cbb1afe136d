import { Migration } from '@mikro-orm/migrations';

export class Migration20261124050000_idempotency_key extends Migration {

  override name = 'Migration20261124050000_idempotency_key';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_key" ("id" varchar(255) not null, "user_id" varchar(255) not null, "scope" varchar(255) not null, "key_hash" varchar(255) not null, "fingerprint" varchar(255) not null, "state" varchar(255) not null, "response_status" int null, "response" text null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "idempotency_key_expires_at_index" on "idempotency_key" ("expires_at");`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_user_id_scope_key_hash_unique" unique ("user_id", "scope", "key_hash");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_key" cascade;`);
  }

}
