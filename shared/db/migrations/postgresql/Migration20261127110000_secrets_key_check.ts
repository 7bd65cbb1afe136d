import { Migration } from '@mikro-orm/migrations';

export class Migration20261127110000_secrets_key_check extends Migration {

  override name = 'Migration20261127110000_secrets_key_check';

  override up(): void | Promise<void> {
    this.addSql(`create table "secrets_key_check" ("id" varchar(255) not null, "key_check" varchar(255) not null, "updated_at" timestamptz not null, primary key ("id"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "secrets_key_check" cascade;`);
  }

}
