import { Migration } from '@mikro-orm/migrations';

export class Migration20261127120000_catalog_metadata extends Migration {

  override name = 'Migration20261127120000_catalog_metadata';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`catalog_entry\` add column \`name\` text null;`);
    this.addSql(`alter table \`catalog_entry\` add column \`description\` text null;`);
    this.addSql(`alter table \`catalog_entry\` add column \`category\` text null;`);
    this.addSql(`alter table \`catalog_entry\` add column \`protocol\` text null;`);
    this.addSql(`alter table \`catalog_entry\` add column \`price_hint\` text null;`);
    this.addSql(`alter table \`catalog_entry\` add column \`updated_at\` datetime null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`catalog_entry\` drop column \`name\`;`);
    this.addSql(`alter table \`catalog_entry\` drop column \`description\`;`);
    this.addSql(`alter table \`catalog_entry\` drop column \`category\`;`);
    this.addSql(`alter table \`catalog_entry\` drop column \`protocol\`;`);
    this.addSql(`alter table \`catalog_entry\` drop column \`price_hint\`;`);
    this.addSql(`alter table \`catalog_entry\` drop column \`updated_at\`;`);
  }

}
