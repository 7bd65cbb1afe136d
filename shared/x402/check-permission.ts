// The checks verify and settle share, in order, each a named step with its own reason:
//   1. the token decodes (never throws on hostile input) and carries no session keys;
//   2. its signed fields hash to a stored permission (a changed plan, resource, agent, nonce or owner names none);
//   3. its signature is the one issued (its SHA-256, the only form stored, compared in constant time) and
//      recovers to the permission owner;
//   4. the permission is Active;
//   5. some paymentRequired.accepts[i] matches scheme, network, plan (and agent when the permission is bound);
//   6. the caller owns the plan or the bound agent (only the seller side may verify or settle);
//   7. a bound agent still has the plan attached.
// Listing and funding are decided by the callers: verify refuses an unlisted plan outright, settle only when it
// would have to buy (subscribers keep spending credits they hold).
import type { ServiceContext } from '../context.js';
import type { ActingUser } from '../auth/caller.js';
import { type PlanRow, planOr404 } from '../credits/lookup.js';
import { secretsEqual, sha256Hex } from '../crypto/hashing.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { isAttached } from '../registry/store/agent-plans.js';
import { agentById } from '../registry/store/agents.js';
import { SESSION_KEYS_PROVIDER, decodeToken, fieldsOf, permissionHashOf, recoverSigner } from './permission-token.js';
import { type PermissionRow, permissionByHash } from './store.js';
import { Reason } from './reasons.js';
import type { PermissionToken } from './objects.js';
import type { OfferedOption, OfferedPaymentRequired } from './requests.js';

export interface PresentedPermission {
  readonly paymentRequired: OfferedPaymentRequired;
  readonly x402AccessToken: string;
}

export type PermissionCheck =
  | { type: 'valid'; permission: PermissionRow; plan: PlanRow; token: PermissionToken }
  | { type: 'invalid'; reason: string; message: string; payer?: string; network?: string };

const invalid = (reason: string, message: string, permission?: PermissionRow): PermissionCheck => ({
  type: 'invalid',
  reason,
  message,
  ...(permission === undefined ? {} : { payer: permission.ownerAddress, network: permission.network }),
});

function matches(option: OfferedOption, p: PermissionRow): boolean {
  if (option.scheme !== p.scheme || option.network !== p.network) return false;
  if (option.planId === undefined || String(option.planId) !== String(p.planId)) return false;
  return p.agentId == null || option.extra?.agentId === p.agentId;
}

function hashOf(token: PermissionToken): string | undefined {
  try {
    return permissionHashOf(fieldsOf(token));
  } catch {
    // A shape the schema let through but EIP-712 encoding refuses: it cannot name a permission.
    return undefined;
  }
}

export async function checkPermission(
  ctx: ServiceContext,
  caller: ActingUser,
  input: PresentedPermission,
): Promise<PermissionCheck> {
  const decoded = decodeToken(input.x402AccessToken);
  if (!decoded.ok) return invalid(Reason.invalidToken, decoded.reason);
  const { token } = decoded;
  // Not part of the signed typed data, so pinned here: this service never issues session keys.
  const { sessionKeysProvider, sessionKeys } = token.payload.authorization;
  if (sessionKeysProvider !== SESSION_KEYS_PROVIDER || sessionKeys.length > 0) {
    return invalid(Reason.invalidToken, 'the token carries session keys this service did not issue');
  }
  const hash = hashOf(token);
  if (hash === undefined) return invalid(Reason.invalidToken, 'the token fields cannot be hashed');
  const em = ctx.db.em();
  const permission = await permissionByHash(emSql(em, ctx.db.dialect), hash);
  if (permission === undefined) return invalid(Reason.permissionNotFound, 'the token names no permission');
  if (!secretsEqual(permission.signatureHash, sha256Hex(token.payload.signature))) {
    return invalid(Reason.invalidSignature, 'the token signature is not the one issued', permission);
  }
  const signer = await recoverSigner(token);
  if (signer === undefined || signer.toLowerCase() !== permission.ownerAddress.toLowerCase()) {
    return invalid(Reason.invalidSignature, 'the token signature does not recover to the permission owner', permission);
  }
  if (permission.status !== 'Active')
    return invalid(Reason.permissionRevoked, 'the permission was revoked', permission);
  if (!input.paymentRequired.accepts.some((o) => matches(o, permission))) {
    return invalid(
      Reason.requirementsMismatch,
      'no accepted option matches the permission scheme, network, plan and agent',
      permission,
    );
  }
  let plan: PlanRow;
  try {
    plan = await planOr404(em, permission.planId);
  } catch (err) {
    if (err instanceof AppError)
      return invalid(Reason.permissionNotFound, 'the plan of the permission no longer exists', permission);
    throw err;
  }
  let ownsAgent = false;
  if (permission.agentId != null) {
    const agent = await agentById(em, permission.agentId);
    ownsAgent = agent !== null && agent.ownerId === caller.userId;
  }
  if (plan.ownerId !== caller.userId && !ownsAgent) {
    return invalid(
      Reason.notAuthorized,
      'only the owner of the plan or of the agent may verify or settle this permission',
      permission,
    );
  }
  if (permission.agentId != null && !(await isAttached(em, plan.id, permission.agentId))) {
    return invalid(
      Reason.planNotAttached,
      `plan ${plan.id} is no longer attached to agent ${permission.agentId}`,
      permission,
    );
  }
  return { type: 'valid', permission, plan, token };
}
