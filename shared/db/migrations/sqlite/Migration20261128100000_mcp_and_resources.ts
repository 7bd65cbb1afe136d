import { Migration } from '@mikro-orm/migrations';

export class Migration20261128100000_mcp_and_resources extends Migration {

  override name = 'Migration20261128100000_mcp_and_resources';

  override up(): void | Promise<void> {
    this.addSql(`create table \`mcp_session\` (\`session_hash\` text not null primary key, \`grant_id\` text not null, \`protocol_version\` text not null, \`ended_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`mcp_session_grant_id_index\` on \`mcp_session\` (\`grant_id\`);`);
    this.addSql(`alter table \`oauth_client\` add column \`registration\` text check (\`registration\` in ('operator', 'dynamic', 'metadata_document')) not null default 'operator';`);
    this.addSql(`alter table \`oauth_client\` add column \`metadata_expires_at\` datetime null;`);
    this.addSql(`alter table \`oauth_code\` add column \`audience\` text check (\`audience\` in ('api', 'mcp')) not null default 'api';`);
    this.addSql(`alter table \`oauth_device_code\` add column \`audience\` text check (\`audience\` in ('api', 'mcp')) not null default 'api';`);
    this.addSql(`alter table \`oauth_refresh_token\` add column \`audience\` text check (\`audience\` in ('api', 'mcp')) not null default 'api';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`mcp_session\`;`);
    this.addSql(`alter table \`oauth_client\` drop column \`registration\`;`);
    this.addSql(`alter table \`oauth_client\` drop column \`metadata_expires_at\`;`);
    this.addSql(`alter table \`oauth_code\` drop column \`audience\`;`);
    this.addSql(`alter table \`oauth_device_code\` drop column \`audience\`;`);
    this.addSql(`alter table \`oauth_refresh_token\` drop column \`audience\`;`);
  }

}
