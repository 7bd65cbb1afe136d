import { Migration } from '@mikro-orm/migrations';

export class Migration20261123134526_auth_nonce extends Migration {

  override name = 'Migration20261123134526_auth_nonce';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`router_payment\` add column \`auth_nonce\` text null;`);
    this.addSql(`create unique index \`router_payment_user_id_auth_nonce_unique\` on \`router_payment\` (\`user_id\`, \`auth_nonce\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index \`router_payment_user_id_auth_nonce_unique\`;`);
    this.addSql(`alter table \`router_payment\` drop column \`auth_nonce\`;`);
  }

}
