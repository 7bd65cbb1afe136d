import { Migration } from '@mikro-orm/migrations';

export class Migration20261127100000_oauth_disable_and_device_rate extends Migration {

  override name = 'Migration20261127100000_oauth_disable_and_device_rate';

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth_device_rate" ("bucket" varchar(255) not null, "window_started_at" timestamptz not null, "used" int not null, primary key ("bucket"));`);

    this.addSql(`alter table "oauth_grant" drop constraint "oauth_grant_revoked_reason_check";`);
    this.addSql(`create index "oauth_grant_client_id_status_index" on "oauth_grant" ("client_id", "status");`);
    this.addSql(`alter table "oauth_grant" add constraint "oauth_grant_revoked_reason_check" check ("revoked_reason" in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay', 'client_disabled'));`);

    // Clients disabled before this migration left their grants live (their tokens kept paying until they expired):
    // revoke them as `oauth-clients disable` now does, each grant's delegation and refresh tokens with it, at the
    // time the client was disabled. Delegations first: they are found through grants that are still Active.
    this.addSql(`update delegation set status = 'Revoked', revoked_at = (select c.disabled_at from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.delegation_id = delegation.id and g.user_id = delegation.user_id and g.status = 'Active' and c.disabled_at is not null) where status = 'Active' and exists (select 1 from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.delegation_id = delegation.id and g.user_id = delegation.user_id and g.status = 'Active' and c.disabled_at is not null);`);
    this.addSql(`update oauth_refresh_token set revoked_at = (select c.disabled_at from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.id = oauth_refresh_token.grant_id) where revoked_at is null and exists (select 1 from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.id = oauth_refresh_token.grant_id and g.status = 'Active' and c.disabled_at is not null);`);
    this.addSql(`update oauth_grant set status = 'Revoked', revoked_reason = 'client_disabled', revoked_at = (select c.disabled_at from oauth_client c where c.client_id = oauth_grant.client_id) where status = 'Active' and client_id in (select client_id from oauth_client where disabled_at is not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_device_rate" cascade;`);

    // The reason this migration added is unknown to the constraint it restores: such a grant stays revoked, its
    // reason unrecorded.
    this.addSql(`update oauth_grant set revoked_reason = null where revoked_reason = 'client_disabled';`);

    this.addSql(`drop index "oauth_grant_client_id_status_index";`);
    this.addSql(`alter table "oauth_grant" drop constraint "oauth_grant_revoked_reason_check";`);
    this.addSql(`alter table "oauth_grant" add constraint "oauth_grant_revoked_reason_check" check ("revoked_reason" in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay'));`);
  }

}
