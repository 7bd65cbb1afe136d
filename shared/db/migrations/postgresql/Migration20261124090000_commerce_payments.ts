import { Migration } from '@mikro-orm/migrations';

export class Migration20261124090000_commerce_payments extends Migration {

  override name = 'Migration20261124090000_commerce_payments';

  override up(): void | Promise<void> {
    this.addSql(`alter table "oauth_grant" drop column "last_used_at";`);

    this.addSql(`alter table "router_payment" drop constraint "router_payment_user_id_request_id_unique";`);
    this.addSql(`alter table "router_payment" add "grant_id" varchar(255) null, add "client_id" varchar(255) null, add "request_scope" varchar(255) not null default '';`);
    this.addSql(`alter table "router_payment" alter column "api_key_id" drop not null;`);
    this.addSql(`create index "router_payment_grant_id_created_at_index" on "router_payment" ("grant_id", "created_at");`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_user_id_request_scope_request_id_unique" unique ("user_id", "request_scope", "request_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "oauth_grant" add "last_used_at" timestamptz(6) null;`);

    this.addSql(`drop index "router_payment_grant_id_created_at_index";`);
    this.addSql(`alter table "router_payment" drop constraint "router_payment_user_id_request_scope_request_id_unique";`);
    this.addSql(`alter table "router_payment" drop column "grant_id", drop column "client_id", drop column "request_scope";`);
    this.addSql(`alter table "router_payment" alter column "api_key_id" set not null;`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_user_id_request_id_unique" unique ("user_id", "request_id");`);
  }

}
