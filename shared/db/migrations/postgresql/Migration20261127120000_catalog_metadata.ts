import { Migration } from '@mikro-orm/migrations';

export class Migration20261127120000_catalog_metadata extends Migration {

  override name = 'Migration20261127120000_catalog_metadata';

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog_entry" add "name" varchar(255) null, add "description" text null, add "category" varchar(255) null, add "protocol" varchar(255) null, add "price_hint" varchar(255) null, add "updated_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalog_entry" drop column "name", drop column "description", drop column "category", drop column "protocol", drop column "price_hint", drop column "updated_at";`);
  }

}
