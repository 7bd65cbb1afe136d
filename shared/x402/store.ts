// Every statement on x402_permission and x402_settlement, hand SQL on both. A settle writes them inside its burn
// transaction with conditional statements whose row counts decide (the claim's unique key, `used_credits` only
// `where status = 'Active'`), so the permission's other statements (issue, list, read, revoke) are SQL too, rather
// than the entity manager on the same rows.
//
// All SQL here is bound, never formatted into the statement text. Amounts are read with `cast(... as text)`:
// better-sqlite3 hands BIGINT columns back as JavaScript numbers, which silently lose precision above 2^53. Dates
// are bound as shared/db/sql.ts binds them (epoch milliseconds on SQLite, as MikroORM stores them there).
import { type SqlRow, type SqlTx, int64, isUniqueViolation, timestamp } from '../db/sql.js';
import { MAX_INT64, fromColumn } from '../money.js';

export interface PermissionRow {
  readonly permissionHash: string;
  readonly userId: string;
  readonly ownerAddress: string;
  readonly scheme: string;
  readonly network: string;
  readonly planId: number;
  readonly agentId: string | null;
  readonly httpVerb: string | null;
  readonly resourceUrl: string;
  readonly resourceDescription: string | null;
  readonly delegationId: string | null;
  /** SHA-256 (hex) of the issued signature: the signature itself would let a copy of the database rebuild the token. */
  readonly signatureHash: string;
  readonly status: string;
  readonly createdAt: Date;
}

export interface StoredPermission extends PermissionRow {
  readonly usedCredits: bigint;
}

export interface NewPermission extends PermissionRow {
  readonly nonce: string;
}

const COLUMNS = `permission_hash, user_id, owner_address, scheme, network, plan_id, agent_id, http_verb, resource_url,
  resource_description, delegation_id, signature_hash, status, cast(used_credits as text) as used_credits, created_at`;

const textOrNull = (v: unknown): string | null => (v == null ? null : String(v));

function permissionOf(r: SqlRow): StoredPermission {
  return {
    permissionHash: String(r.permission_hash),
    userId: String(r.user_id),
    ownerAddress: String(r.owner_address),
    scheme: String(r.scheme),
    network: String(r.network),
    planId: Number(r.plan_id),
    agentId: textOrNull(r.agent_id),
    httpVerb: textOrNull(r.http_verb),
    resourceUrl: String(r.resource_url),
    resourceDescription: textOrNull(r.resource_description),
    delegationId: textOrNull(r.delegation_id),
    signatureHash: String(r.signature_hash),
    status: String(r.status),
    usedCredits: fromColumn(r.used_credits),
    createdAt: timestamp(r.created_at),
  };
}

/** A new permission, nothing used yet. */
export async function insertPermission(sql: SqlTx, p: NewPermission): Promise<void> {
  await sql.run(
    `insert into x402_permission (permission_hash, user_id, owner_address, scheme, network, plan_id, agent_id,
       http_verb, resource_url, resource_description, delegation_id, nonce, signature_hash, status, used_credits,
       revoked_at, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      p.permissionHash,
      p.userId,
      p.ownerAddress,
      p.scheme,
      p.network,
      p.planId,
      p.agentId,
      p.httpVerb,
      p.resourceUrl,
      p.resourceDescription,
      p.delegationId,
      p.nonce,
      p.signatureHash,
      p.status,
      0n,
      null,
      p.createdAt,
    ],
  );
}

/** The permission whose token fields hash to `permissionHash`, whoever's it is. */
export async function permissionByHash(sql: SqlTx, permissionHash: string): Promise<StoredPermission | undefined> {
  const [r] = await sql.all(`select ${COLUMNS} from x402_permission where permission_hash = ?`, [permissionHash]);
  return r === undefined ? undefined : permissionOf(r);
}

/** The user's own permission (another user's is undefined too). */
export async function ownPermissionByHash(
  sql: SqlTx,
  userId: string,
  permissionHash: string,
): Promise<StoredPermission | undefined> {
  const [r] = await sql.all(`select ${COLUMNS} from x402_permission where permission_hash = ? and user_id = ?`, [
    permissionHash,
    userId,
  ]);
  return r === undefined ? undefined : permissionOf(r);
}

/** One page of the user's permissions (of one scheme, if given), newest first. */
export async function permissionsPage(
  sql: SqlTx,
  userId: string,
  scheme: string | undefined,
  page: { readonly limit: number; readonly offset: number },
): Promise<{ rows: StoredPermission[]; total: number }> {
  const where = scheme === undefined ? 'user_id = ?' : 'user_id = ? and scheme = ?';
  const params = scheme === undefined ? [userId] : [userId, scheme];
  const rows = await sql.all(
    `select ${COLUMNS} from x402_permission where ${where}
     order by created_at desc, permission_hash asc limit ? offset ?`,
    [...params, page.limit, page.offset],
  );
  const [count] = await sql.all(`select count(*) as n from x402_permission where ${where}`, params);
  return { rows: rows.map(permissionOf), total: count === undefined ? 0 : Number(int64(count.n)) };
}

/** Revokes the user's permission if it is still Active (a revoked one stays as it was). */
export async function revokeActivePermission(
  sql: SqlTx,
  userId: string,
  permissionHash: string,
  now: Date,
): Promise<void> {
  await sql.run(
    `update x402_permission set status = 'Revoked', revoked_at = ?
     where permission_hash = ? and user_id = ? and status = 'Active'`,
    [now, permissionHash, userId],
  );
}

const USE_CREDITS = `update x402_permission
  set used_credits = case when used_credits > ${MAX_INT64} - ? then ${MAX_INT64} else used_credits + ? end
  where permission_hash = ? and status = 'Active'`;

/**
 * Adds a settle's burn to the permission's running total, only while it is Active; the number of rows changed
 * (0: revoked). used_credits is a statistic of every burn the permission made: it saturates at the 64-bit maximum
 * instead of overflowing (PostgreSQL would refuse the UPDATE and fail a settle whose burn was valid).
 */
export const addUsedCredits = (sql: SqlTx, permissionHash: string, amount: bigint): Promise<number> =>
  sql.run(USE_CREDITS, [amount, amount, permissionHash]);

/**
 * Claims (permission, agentRequestId) for one settle; false when it was claimed before. On PostgreSQL the failed
 * insert aborts the transaction: the caller rolls it back.
 */
export async function claimSettlement(
  sql: SqlTx,
  claim: { id: string; permissionHash: string; agentRequestId: string; creditsRedeemed: bigint },
  now: Date,
): Promise<boolean> {
  try {
    await sql.run(
      'insert into x402_settlement (id, permission_hash, agent_request_id, credits_redeemed, order_id, created_at) values (?, ?, ?, ?, ?, ?)',
      [claim.id, claim.permissionHash, claim.agentRequestId, claim.creditsRedeemed, null, now],
    );
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function setSettlementOrder(sql: SqlTx, settlementId: string, orderId: string): Promise<void> {
  await sql.run('update x402_settlement set order_id = ? where id = ?', [orderId, settlementId]);
}

export async function dropSettlementClaim(sql: SqlTx, settlementId: string): Promise<void> {
  await sql.run('delete from x402_settlement where id = ?', [settlementId]);
}

/** The settlement first recorded for (permission, agentRequestId), if any. */
export async function firstSettlement(
  sql: SqlTx,
  permissionHash: string,
  agentRequestId: string,
): Promise<{ id: string; creditsRedeemed: bigint; orderId: string | null } | undefined> {
  const [r] = await sql.all(
    'select id, cast(credits_redeemed as text) as credits_redeemed, order_id from x402_settlement where permission_hash = ? and agent_request_id = ?',
    [permissionHash, agentRequestId],
  );
  if (r === undefined || typeof r.id !== 'string') return undefined;
  return {
    id: r.id,
    creditsRedeemed: fromColumn(r.credits_redeemed),
    orderId: typeof r.order_id === 'string' ? r.order_id : null,
  };
}
