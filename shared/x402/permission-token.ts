// The x402 access token of a delegated permission: base64 JSON of the interface's shape, signed
// with EIP-712 by the subscriber's custodial wallet. The permission hash is the typed-data hash, so any change
// to a signed field (plan, scheme, network, agent, verb, resource, owner, nonce) names no permission at all.
import { type Hex, hashTypedData, recoverTypedDataAddress } from 'viem';
import { PermissionToken } from './objects.js';

/** A token larger than this is refused before base64 decoding (a real one is well under 2 KB). */
export const MAX_TOKEN_CHARS = 16_384;
export const SESSION_KEYS_PROVIDER = 'payroute';

export const PERMISSION_TYPES = {
  Permission: [
    { name: 'resource', type: 'string' },
    { name: 'scheme', type: 'string' },
    { name: 'network', type: 'string' },
    { name: 'planId', type: 'string' },
    { name: 'agentId', type: 'string' },
    { name: 'httpVerb', type: 'string' },
    { name: 'sessionKeysProvider', type: 'string' },
    { name: 'owner', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export interface PermissionFields {
  resource: string;
  scheme: string;
  network: string;
  planId: string;
  agentId: string;
  httpVerb: string;
  owner: `0x${string}`;
  nonce: Hex;
}

function chainIdOf(network: string): number {
  return Number(network.slice('eip155:'.length));
}

export function typedData(f: PermissionFields) {
  return {
    domain: { name: 'payroute x402 permission', version: '1', chainId: chainIdOf(f.network) },
    types: PERMISSION_TYPES,
    primaryType: 'Permission' as const,
    message: { ...f, sessionKeysProvider: SESSION_KEYS_PROVIDER },
  };
}

export const permissionHashOf = (f: PermissionFields): Hex => hashTypedData(typedData(f));

export function fieldsOf(token: PermissionToken): PermissionFields {
  return {
    resource: token.resource.url,
    scheme: token.accepted.scheme,
    network: token.accepted.network,
    planId: token.accepted.planId,
    agentId: token.accepted.extra?.agentId ?? '',
    httpVerb: token.accepted.extra?.httpVerb ?? '',
    owner: token.payload.authorization.from as `0x${string}`,
    nonce: token.payload.authorization.nonce as Hex,
  };
}

export function encodeToken(token: PermissionToken): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64');
}

export type DecodeResult = { ok: true; token: PermissionToken } | { ok: false; reason: string };

/** Never throws: hostile input yields `{ ok: false }` with a reason. */
export function decodeToken(raw: unknown): DecodeResult {
  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, reason: 'token must be a non-empty string' };
  if (raw.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'token is too large' };
  // Standard base64 with padding (x402 headers); base64url is accepted too.
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return { ok: false, reason: 'token is not base64' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: 'token is not base64 JSON' };
  }
  const parsed = PermissionToken.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'token does not have the x402 permission shape' };
  return { ok: true, token: parsed.data };
}

/** The address that signed the token's typed data (viem recovery, ~4 ms), or undefined for a bad signature. */
export async function recoverSigner(token: PermissionToken): Promise<string | undefined> {
  try {
    return await recoverTypedDataAddress({ ...typedData(fieldsOf(token)), signature: token.payload.signature as Hex });
  } catch {
    return undefined;
  }
}
