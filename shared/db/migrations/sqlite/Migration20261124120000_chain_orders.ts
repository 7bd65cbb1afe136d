import { Migration } from '@mikro-orm/migrations';

export class Migration20261124120000_chain_orders extends Migration {

  override name = 'Migration20261124120000_chain_orders';

  override up(): void | Promise<void> {
    this.addSql(`create table \`chain_order\` (\`id\` text not null primary key, \`plan_id\` text not null, \`buyer_user_id\` text not null, \`holder_address\` text not null, \`payer_address\` text not null, \`asset\` text not null, \`amount_paid\` bigint not null, \`credits\` bigint not null, \`status\` text check (\`status\` in ('submitting', 'paid', 'failed')) not null, \`tx_hash\` text null, \`failure_reason\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`chain_order_submitting_index\` on \`chain_order\` (\`created_at\`) where status = 'submitting';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`chain_order\`;`);
  }

}
