import { Migration } from '@mikro-orm/migrations';

export class Migration20261127100000_oauth_disable_and_device_rate extends Migration {

  override name = 'Migration20261127100000_oauth_disable_and_device_rate';

  override up(): void | Promise<void> {
    this.addSql(`create table \`oauth_device_rate\` (\`bucket\` text not null primary key, \`window_started_at\` datetime not null, \`used\` integer not null);`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`oauth_grant__temp_alter\` (\`id\` text not null primary key, \`user_id\` text not null, \`client_id\` text not null, \`consent_type\` text check (\`consent_type\` in ('commerce', 'account_access')) not null, \`delegation_id\` text not null, \`status\` text check (\`status\` in ('Active', 'Revoked')) not null, \`revoked_at\` datetime null, \`revoked_reason\` text check (\`revoked_reason\` in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay', 'client_disabled')) null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`oauth_grant__temp_alter\` select \`id\`, \`user_id\`, \`client_id\`, \`consent_type\`, \`delegation_id\`, \`status\`, \`revoked_at\`, \`revoked_reason\`, \`created_at\` from \`oauth_grant\`;`);
    this.addSql(`drop table \`oauth_grant\`;`);
    this.addSql(`alter table \`oauth_grant__temp_alter\` rename to \`oauth_grant\`;`);
    this.addSql(`create index \`oauth_grant_user_id_created_at_index\` on \`oauth_grant\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`create index \`oauth_grant_client_id_status_index\` on \`oauth_grant\` (\`client_id\`, \`status\`);`);
    this.addSql(`pragma foreign_keys = on;`);

    // Clients disabled before this migration left their grants live (their tokens kept paying until they expired):
    // revoke them as `oauth-clients disable` now does, each grant's delegation and refresh tokens with it, at the
    // time the client was disabled. Delegations first: they are found through grants that are still Active.
    this.addSql(`update delegation set status = 'Revoked', revoked_at = (select c.disabled_at from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.delegation_id = delegation.id and g.user_id = delegation.user_id and g.status = 'Active' and c.disabled_at is not null) where status = 'Active' and exists (select 1 from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.delegation_id = delegation.id and g.user_id = delegation.user_id and g.status = 'Active' and c.disabled_at is not null);`);
    this.addSql(`update oauth_refresh_token set revoked_at = (select c.disabled_at from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.id = oauth_refresh_token.grant_id) where revoked_at is null and exists (select 1 from oauth_grant g join oauth_client c on c.client_id = g.client_id where g.id = oauth_refresh_token.grant_id and g.status = 'Active' and c.disabled_at is not null);`);
    this.addSql(`update oauth_grant set status = 'Revoked', revoked_reason = 'client_disabled', revoked_at = (select c.disabled_at from oauth_client c where c.client_id = oauth_grant.client_id) where status = 'Active' and client_id in (select client_id from oauth_client where disabled_at is not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`oauth_device_rate\`;`);

    // The reason this migration added is unknown to the constraint it restores: such a grant stays revoked, its
    // reason unrecorded.
    this.addSql(`update oauth_grant set revoked_reason = null where revoked_reason = 'client_disabled';`);

    this.addSql(`pragma foreign_keys = off;`);
    this.addSql(`create table \`oauth_grant__temp_alter\` (\`id\` TEXT not null primary key, \`user_id\` TEXT not null, \`client_id\` TEXT not null, \`consent_type\` TEXT check (\`consent_type\` in ('commerce', 'account_access')) not null, \`delegation_id\` TEXT not null, \`status\` TEXT check (\`status\` in ('Active', 'Revoked')) not null, \`revoked_at\` datetime null, \`revoked_reason\` TEXT check (\`revoked_reason\` in ('user', 'revocation_endpoint', 'code_replay', 'refresh_reuse', 'device_replay')) null, \`created_at\` datetime not null);`);
    this.addSql(`insert into \`oauth_grant__temp_alter\` select \`id\`, \`user_id\`, \`client_id\`, \`consent_type\`, \`delegation_id\`, \`status\`, \`revoked_at\`, \`revoked_reason\`, \`created_at\` from \`oauth_grant\`;`);
    this.addSql(`drop table \`oauth_grant\`;`);
    this.addSql(`alter table \`oauth_grant__temp_alter\` rename to \`oauth_grant\`;`);
    this.addSql(`create index \`oauth_grant_user_id_created_at_index\` on \`oauth_grant\` (\`user_id\`, \`created_at\`);`);
    this.addSql(`pragma foreign_keys = on;`);
  }

}
