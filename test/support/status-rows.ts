// Rows with a chosen status, written as plain SQL (no entity, no type check): what another version, a hand edit
// or a bug could put in a status column, for the tests of the columns' constraints and of the migration to them.
import type { SqlTx } from '../../shared/db/sql.js';

export async function insertDelegationRow(sql: SqlTx, id: string, status: string): Promise<number> {
  return sql.run(
    `insert into delegation (id, user_id, provider, status, currency, spending_limit_cents, amount_spent_cents,
       transaction_count, allowed_recipients, plan_id, api_key_id, provider_payment_method_id, expires_at, revoked_at,
       created_at)
     values (?, 'u', 'erc4337', ?, 'usd', 100, 0, 0, null, null, null, null, ?, null, ?)`,
    [id, status, new Date(Date.now() + 3_600_000), new Date()],
  );
}

export async function insertPermissionRow(sql: SqlTx, hash: string, status: string): Promise<number> {
  return sql.run(
    `insert into x402_permission (permission_hash, user_id, owner_address, scheme, network, plan_id, agent_id,
       http_verb, resource_url, resource_description, delegation_id, nonce, signature_hash, status, used_credits,
       revoked_at, created_at)
     values (?, 'u', '0xA', 'svc:erc4337', 'eip155:84532', 1, null, null, 'https://a.example/x', null, null, ?, ?, ?,
       0, null, ?)`,
    [hash, `0x${'11'.repeat(32)}`, 'ab'.repeat(32), status, new Date()],
  );
}

export async function insertPaymentRow(
  sql: SqlTx,
  id: string,
  o: { status: string; feeStatus: string; failureReason?: string | null },
): Promise<number> {
  return sql.run(
    `insert into router_payment (id, user_id, api_key_id, request_id, delegation_id, mode, protocol, x402version,
       status, scheme, network, asset, recipient, amount, amount_raw, approx_cents, fee_bps, fee_amount, fee_cents,
       cap_charged_cents, fee_recipient, fee_status, resource_url, tx_hash, failure_reason, auth_nonce, created_at,
       updated_at)
     values (?, 'u', 'k', ?, 'd', 'route', 'x402', 2, ?, 'exact', 'eip155:84532', '0xT', '0xR', 10000, '10000', 1,
       500, 500, 0, 2, '0xF', ?, null, null, ?, ?, ?, ?)`,
    [id, id, o.status, o.feeStatus, o.failureReason ?? null, `0x${id.padStart(64, '0')}`, new Date(), new Date()],
  );
}
