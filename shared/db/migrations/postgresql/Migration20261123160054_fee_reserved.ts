import { Migration } from '@mikro-orm/migrations';

export class Migration20261123160054_fee_reserved extends Migration {

  override name = 'Migration20261123160054_fee_reserved';

  override up(): void | Promise<void> {
    this.addSql(`create index "router_payment_fee_reserved_index" on "router_payment" ("created_at") where fee_status = 'reserved';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "router_payment_fee_reserved_index";`);
  }

}
