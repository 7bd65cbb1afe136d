import { createHash } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';

/**
 * x402_permission kept each permission's EIP-712 signature in clear, and the signature is all an x402 access token
 * holds that the row does not: a copy of the database could rebuild every bearer token. Verification needs only
 * to recognise the signature it issued, so the row now keeps its SHA-256 (hex of the UTF-8 of the `0x...` string
 * as issued), like API keys. The column is renamed and every value overwritten by its hash here, rather than a
 * new column added and the old one dropped: SQLite cannot add a NOT NULL column without a default, and
 * PostgreSQL's DROP COLUMN only hides a column, whose values stay in every tuple until it is rewritten. (Pages and
 * tuple versions freed by the overwrite keep the old bytes until SQLite reuses or VACUUMs them, or PostgreSQL
 * VACUUMs them; backups taken before hold them too.) Irreversible: a hash does not give the signature back.
 */
export class Migration20261124030200_permission_signature_hash extends Migration {
  override name = 'Migration20261124030200_permission_signature_hash';

  override async up(): Promise<void> {
    await this.execute('alter table "x402_permission" rename column "signature" to "signature_hash";');
    const rows = await this.execute('select "permission_hash", "signature_hash" from "x402_permission"');
    for (const r of rows) {
      const hash = createHash('sha256').update(String(r.signature_hash), 'utf8').digest('hex');
      await this.execute('update "x402_permission" set "signature_hash" = ? where "permission_hash" = ?', [
        hash,
        String(r.permission_hash),
      ]);
    }
  }
}
