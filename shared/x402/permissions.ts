// Delegated x402 permissions: create, list, read, revoke.
//
// Creating a permission is a checkout: an unlisted plan is refused with 403 BCK.PROTOCOL.0062. The
// subscriber must be able to pay for what the permission will spend: credits of the plan in its wallet now, or
// a delegation that can pay for one order of the plan (402 BCK.CREDITS.0003 otherwise). The token is signed
// with EIP-712 by the subscriber's custodial wallet; its typed-data hash is the permissionHash, so the row and
// the token can never disagree about what was authorized.
import { randomBytes } from 'node:crypto';
import { type Hex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { walletKeyOf } from '../accounts/users.js';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import type { ActingUser } from '../auth/caller.js';
import { creditBalance } from '../credits/store/lots.js';
import { sha256Hex } from '../crypto/hashing.js';
import { type PlanRow, planOr404, visibleAgentOr404 } from '../credits/lookup.js';
import type { PermissionStatus } from '../db/entities/index.js';
import { type SqlTx, emSql } from '../db/sql.js';
import { effectiveStatus } from '../delegations/responses.js';
import { findOwnDelegation } from '../delegations/store.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { type DelegationSnapshot, delegationCanPay, planPrice } from '../credits/funding.js';
import { FIAT_PROVIDERS } from '../delegations/requests.js';
import {
  type PermissionFields,
  SESSION_KEYS_PROVIDER,
  decodeToken,
  encodeToken,
  fieldsOf,
  permissionHashOf,
  typedData,
} from './permission-token.js';
import type { PermissionScheme, PermissionToken } from './objects.js';
import type { CreatePermissionBody, ListPermissionsQuery } from './requests.js';
import { isAttached } from '../registry/store/agent-plans.js';
import {
  type PermissionRow,
  type StoredPermission,
  insertPermission,
  ownPermissionByHash,
  permissionsPage,
  revokeActivePermission,
} from './store.js';

/** The caller of the permission endpoints: the subscriber, through one of its API keys or an account_access token. */
/** Which delegation providers may back a permission of each scheme. */
export function providerFitsScheme(provider: string, scheme: PermissionScheme): boolean {
  const fiat = (FIAT_PROVIDERS as readonly string[]).includes(provider);
  return scheme === 'svc:card-delegation' ? fiat : provider === 'erc4337';
}

export interface PermissionCaller extends ActingUser {
  /** Absent for a connector's token: a grant holds no key, and its delegation is bound to none. */
  readonly apiKeyId?: string | undefined;
}

export interface PermissionRecord {
  permissionHash: string;
  planId: string;
  agentId?: string;
  httpVerb?: string;
  scheme: string;
  network: string;
  ownerAddress: string;
  delegationId?: string;
  status: PermissionStatus;
  usedCredits: string;
  createdAt: string;
  resource: { url: string; description?: string };
}

export function permissionRecord(row: PermissionRow, usedCredits: bigint): PermissionRecord {
  return {
    permissionHash: row.permissionHash,
    planId: String(row.planId),
    ...(row.agentId == null ? {} : { agentId: row.agentId }),
    ...(row.httpVerb == null ? {} : { httpVerb: row.httpVerb }),
    scheme: row.scheme,
    network: row.network,
    ownerAddress: row.ownerAddress,
    ...(row.delegationId == null ? {} : { delegationId: row.delegationId }),
    status: row.status === 'Active' ? 'Active' : 'Revoked',
    usedCredits: toWire(usedCredits),
    createdAt: row.createdAt.toISOString(),
    resource: {
      url: row.resourceUrl,
      ...(row.resourceDescription == null ? {} : { description: row.resourceDescription }),
    },
  };
}

const notFound = (permissionHash: string): AppError =>
  new AppError('BCK.X402.0001', {
    details: `permission ${permissionHash.slice(0, 66)} not found`,
    params: {
      permissionHash: permissionHash.slice(0, 66),
    },
  });

const badDelegation = (why: string, delegationId: string): AppError =>
  new AppError('BCK.X402.0003', { details: why, params: { delegationId: delegationId.slice(0, 100) } });

/** The delegation a new permission names: the caller's own, of a provider fitting the scheme, still usable. */
async function backingDelegation(
  ctx: ServiceContext,
  caller: PermissionCaller,
  input: CreatePermissionBody,
  planId: number,
) {
  const scheme = input.accepted.scheme;
  const delegationId = input.delegationConfig?.delegationId;
  if (delegationId === undefined) {
    if (scheme === 'svc:card-delegation') {
      throw new AppError('BCK.HTTP.0400', {
        details: 'body.delegationConfig.delegationId: required for scheme svc:card-delegation',
      });
    }
    return undefined;
  }
  // Another user's delegation is a 400 (the issue), worded exactly like an unknown one: nothing leaks.
  const d = /^[0-9a-fA-F-]{36}$/.test(delegationId)
    ? await findOwnDelegation(ctx.db.em(), caller.userId, delegationId.toLowerCase())
    : null;
  if (d === null)
    throw badDelegation(`delegation ${delegationId.slice(0, 100)} is not a delegation of yours`, delegationId);
  if (!providerFitsScheme(d.provider, scheme)) {
    throw badDelegation(`a ${d.provider} delegation cannot back a ${scheme} permission`, delegationId);
  }
  if (d.planId != null && d.planId !== planId)
    throw badDelegation('the delegation is restricted to another plan', delegationId);
  if (d.apiKeyId != null && caller.apiKeyId !== undefined && d.apiKeyId !== caller.apiKeyId) {
    throw badDelegation('the delegation is bound to another API key', delegationId);
  }
  const status = effectiveStatus(d, ctx.now());
  if (status === 'Revoked' || status === 'Expired')
    throw badDelegation(`the delegation is ${status.toLowerCase()}`, delegationId);
  return d;
}

/**
 * What an account_access connector may create: svc:card-delegation permissions backed by its grant's own
 * delegation (the card mandate the user consented to), nothing else; 403 BCK.OAUTH.0030 otherwise, before any
 * lookup, so the refusal says nothing about the delegation named.
 */
export function assertGrantMayCreate(
  grant: { readonly kind: 'account_access'; readonly delegationId: string },
  input: CreatePermissionBody,
): void {
  const named = input.delegationConfig?.delegationId.toLowerCase();
  if (input.accepted.scheme === 'svc:card-delegation' && named === grant.delegationId.toLowerCase()) return;
  throw new AppError('BCK.OAUTH.0030', {
    details: "an account_access token may create only svc:card-delegation permissions on its grant's delegation",
    params: { consentType: grant.kind },
  });
}

/** Why a subscriber without credits could not pay through the delegation, or undefined when it could. */
function unfunded(
  ctx: ServiceContext,
  delegation: DelegationSnapshot | undefined,
  plan: PlanRow,
  now: Date,
  spender: string,
): string | undefined {
  if (delegation === undefined) return 'and the permission names no delegation';
  const f = delegationCanPay(delegation, plan, planPrice(plan, ctx.config.ENVIRONMENT), now, spender);
  return f.type === 'fundable' ? undefined : `and the delegation cannot pay for an order: ${f.reason}`;
}

export async function createPermission(
  ctx: ServiceContext,
  caller: PermissionCaller,
  input: CreatePermissionBody,
): Promise<PermissionRecord & { x402AccessToken: string }> {
  const em = ctx.db.em();
  const network = NETWORKS[ctx.config.ENVIRONMENT].caip2;
  if (input.accepted.network !== network) {
    throw new AppError('BCK.HTTP.0400', {
      details: `body.accepted.network: must be ${network} in the ${ctx.config.ENVIRONMENT} environment`,
    });
  }
  const plan = await planOr404(em, input.accepted.planId);
  const agentId = input.accepted.extra?.agentId;
  if (agentId !== undefined) {
    const agent = await visibleAgentOr404(em, agentId, caller);
    if (!(await isAttached(em, plan.id, agent.id))) {
      throw new AppError('BCK.X402.0002', {
        details: `plan ${plan.id} is not attached to agent ${agent.id}`,
        params: {
          planId: String(plan.id),
          agentId: agent.id,
        },
      });
    }
  }
  if (!plan.listed) {
    throw new AppError('BCK.PROTOCOL.0062', {
      details: `plan ${plan.id} is unlisted and cannot be purchased`,
      params: {
        planId: String(plan.id),
      },
    });
  }
  const delegation = await backingDelegation(ctx, caller, input, plan.id);
  const now = ctx.now();
  const balance = await creditBalance(em, plan.id, caller.walletAddress, now);
  if (balance <= 0n) {
    const why = unfunded(ctx, delegation, plan, now, caller.walletAddress);
    if (why !== undefined) {
      throw new AppError('BCK.CREDITS.0003', {
        details: `${caller.walletAddress} holds no credits of plan ${plan.id} ${why}`,
        params: {
          planId: String(plan.id),
          holderAddress: caller.walletAddress,
          balance: '0',
        },
      });
    }
  }

  const fields: PermissionFields = {
    resource: input.resource.url,
    scheme: input.accepted.scheme,
    network,
    planId: String(plan.id),
    agentId: agentId ?? '',
    httpVerb: input.accepted.extra?.httpVerb ?? '',
    owner: caller.walletAddress as `0x${string}`,
    nonce: toHex(randomBytes(32)),
  };
  const account = privateKeyToAccount(await walletKeyOf(ctx, caller.userId));
  const signature: Hex = await account.signTypedData(typedData(fields));
  const permissionHash = permissionHashOf(fields);
  const token: PermissionToken = {
    x402Version: 2,
    resource: input.resource,
    accepted: { ...input.accepted, planId: String(plan.id) },
    payload: {
      signature,
      authorization: {
        from: fields.owner,
        sessionKeysProvider: SESSION_KEYS_PROVIDER,
        sessionKeys: [],
        nonce: fields.nonce,
      },
    },
    extensions: {},
  };
  const x402AccessToken = encodeToken(token);
  // What we hand out must be what verify will accept: same decoder, same hash (catches an oversized token).
  const decoded = decodeToken(x402AccessToken);
  if (!decoded.ok || permissionHashOf(fieldsOf(decoded.token)) !== permissionHash) {
    throw new AppError('BCK.HTTP.0400', {
      details: 'the permission does not fit in an x402 access token (resource or accepted too large)',
    });
  }
  const row = {
    permissionHash,
    userId: caller.userId,
    ownerAddress: caller.walletAddress,
    scheme: fields.scheme,
    network,
    planId: plan.id,
    agentId: agentId ?? null,
    httpVerb: input.accepted.extra?.httpVerb ?? null,
    resourceUrl: input.resource.url,
    resourceDescription: input.resource.description ?? null,
    delegationId: delegation?.id ?? null,
    nonce: fields.nonce,
    // Never the signature itself: with the row's other fields it IS the bearer token (verify needs only to
    // recognise it).
    signatureHash: sha256Hex(signature),
    status: 'Active' as const,
    createdAt: now,
  };
  // Bound, so any text is data to SQLite; PostgreSQL still refuses NUL in text, which the boundary schemas
  // (text.ts) keep out of the resource, description and agent id.
  await insertPermission(emSql(em, ctx.db.dialect), row);
  return { ...permissionRecord(row, 0n), x402AccessToken };
}

export async function listPermissions(
  ctx: ServiceContext,
  userId: string,
  q: ListPermissionsQuery,
): Promise<{ total: number; page: number; offset: number; permissions: PermissionRecord[] }> {
  const { rows, total } = await permissionsPage(permissionSql(ctx), userId, q.scheme, {
    limit: q.offset,
    offset: (q.page - 1) * q.offset,
  });
  return {
    total,
    page: q.page,
    offset: q.offset,
    permissions: rows.map((r) => permissionRecord(r, r.usedCredits)),
  };
}

const permissionSql = (ctx: ServiceContext): SqlTx => emSql(ctx.db.em(), ctx.db.dialect);

/** The caller's own permission; any other (or a malformed hash) is 404 BCK.X402.0001. */
async function ownPermission(sql: SqlTx, userId: string, permissionHash: string): Promise<StoredPermission> {
  const hash = permissionHash.toLowerCase();
  const row = /^0x[0-9a-f]{64}$/.test(hash) ? await ownPermissionByHash(sql, userId, hash) : undefined;
  if (row === undefined) throw notFound(permissionHash);
  return row;
}

export async function getPermission(
  ctx: ServiceContext,
  userId: string,
  permissionHash: string,
): Promise<PermissionRecord> {
  const row = await ownPermission(permissionSql(ctx), userId, permissionHash);
  return permissionRecord(row, row.usedCredits);
}

/**
 * Revokes: one conditional UPDATE. Settle increments usedCredits only `where status = 'Active'` inside its burn
 * transaction, so a settle racing this revoke either committed before it or rolls back.
 */
export async function revokePermission(
  ctx: ServiceContext,
  userId: string,
  permissionHash: string,
): Promise<{ success: true; permissionHash: string; status: 'Revoked' }> {
  const sql = permissionSql(ctx);
  const row = await ownPermission(sql, userId, permissionHash);
  await revokeActivePermission(sql, userId, row.permissionHash, ctx.now());
  return { success: true, permissionHash: row.permissionHash, status: 'Revoked' };
}
