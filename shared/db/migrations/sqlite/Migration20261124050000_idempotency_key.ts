import { Migration } from '@mikro-orm/migrations';

export class Migration20261124050000_idempotency_key extends Migration {

  override name = 'Migration20261124050000_idempotency_key';

  override up(): void | Promise<void> {
    this.addSql(`create table \`idempotency_key\` (\`id\` text not null primary key, \`user_id\` text not null, \`scope\` text not null, \`key_hash\` text not null, \`fingerprint\` text not null, \`state\` text not null, \`response_status\` integer null, \`response\` text null, \`created_at\` datetime not null, \`expires_at\` datetime not null);`);
    this.addSql(`create index \`idempotency_key_expires_at_index\` on \`idempotency_key\` (\`expires_at\`);`);
    this.addSql(`create unique index \`idempotency_key_user_id_scope_key_hash_unique\` on \`idempotency_key\` (\`user_id\`, \`scope\`, \`key_hash\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`idempotency_key\`;`);
  }

}
