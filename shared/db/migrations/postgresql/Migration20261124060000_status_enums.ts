import { Migration } from '@mikro-orm/migrations';

export class Migration20261124060000_status_enums extends Migration {

  override name = 'Migration20261124060000_status_enums';

  override up(): void | Promise<void> {
    // Rows written with a status outside the lists below would make the constraints refuse the migration. Each is
    // mapped to the state the code already gave it: a delegation or permission whose status is not Active was
    // refused every spend and settle (`status = 'Active'` in their conditional UPDATEs), so it becomes Revoked;
    // a payment in no known state could never move again (every transition starts from Issued), so it becomes
    // Failed and keeps its old status in failure_reason; a fee leg only ever moves from reserved, so an unknown one
    // is terminal: settled (what moved is in the journals, not in this column).
    this.addSql(`update "delegation" set "status" = 'Revoked' where "status" not in ('Active', 'Revoked');`);
    this.addSql(`update "x402_permission" set "status" = 'Revoked' where "status" not in ('Active', 'Revoked');`);
    this.addSql(`update "router_payment" set "failure_reason" = coalesce("failure_reason", 'stored status ' || substr("status", 1, 64) || ' is not a payment status'), "status" = 'Failed' where "status" not in ('Issued', 'Settled', 'Failed', 'Pending');`);
    this.addSql(`update "router_payment" set "fee_status" = 'settled' where "fee_status" not in ('none', 'reserved', 'settled', 'released');`);

    this.addSql(`alter table "delegation" alter column "status" type text using ("status"::text);`);
    this.addSql(`alter table "delegation" add constraint "delegation_status_check" check ("status" in ('Active', 'Revoked'));`);

    this.addSql(`alter table "router_payment" alter column "status" type text using ("status"::text);`);
    this.addSql(`alter table "router_payment" alter column "fee_status" type text using ("fee_status"::text);`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_status_check" check ("status" in ('Issued', 'Settled', 'Failed', 'Pending'));`);
    this.addSql(`alter table "router_payment" add constraint "router_payment_fee_status_check" check ("fee_status" in ('none', 'reserved', 'settled', 'released'));`);

    this.addSql(`alter table "x402_permission" alter column "status" type text using ("status"::text);`);
    this.addSql(`alter table "x402_permission" add constraint "x402_permission_status_check" check ("status" in ('Active', 'Revoked'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "delegation" drop constraint "delegation_status_check";`);
    this.addSql(`alter table "delegation" alter column "status" type varchar(255) using ("status"::varchar(255));`);

    this.addSql(`alter table "router_payment" drop constraint "router_payment_status_check";`);
    this.addSql(`alter table "router_payment" drop constraint "router_payment_fee_status_check";`);
    this.addSql(`alter table "router_payment" alter column "status" type varchar(255) using ("status"::varchar(255));`);
    this.addSql(`alter table "router_payment" alter column "fee_status" type varchar(255) using ("fee_status"::varchar(255));`);

    this.addSql(`alter table "x402_permission" drop constraint "x402_permission_status_check";`);
    this.addSql(`alter table "x402_permission" alter column "status" type varchar(255) using ("status"::varchar(255));`);
  }

}
