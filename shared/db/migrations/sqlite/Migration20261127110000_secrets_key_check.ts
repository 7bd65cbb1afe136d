import { Migration } from '@mikro-orm/migrations';

export class Migration20261127110000_secrets_key_check extends Migration {

  override name = 'Migration20261127110000_secrets_key_check';

  override up(): void | Promise<void> {
    this.addSql(`create table \`secrets_key_check\` (\`id\` text not null primary key, \`key_check\` text not null, \`updated_at\` datetime not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`secrets_key_check\`;`);
  }

}
