// EIP-3009 `transferWithAuthorization` signing: the one signature x402 `exact` (EVM) and the MPP `evm` charge
// method both ask of the buyer (coinbase/x402 specs/schemes/exact/scheme_exact_evm.md; mppx evm/Types.ts).
//
// Two signers with identical output:
// - `signAuthorization`: the EIP-712 digest with the domain separator cached per token and chain, then native
//   libsecp256k1 (`secp256k1` N-API addon). Measured on this machine: ~0.11-0.17 ms per signature; viem
//   `hashTypedData` + native is ~0.26-0.33 ms (hashing, with its validation and type walking, is most of it) and
//   viem's pure-JS signer ~0.8-1.4 ms (BENCHMARKS.md). Signing decides paid-route throughput, so this
//   is the router's path.
// - `signAuthorizationViem`: viem `signTypedData`, the reference the tests compare against; `authorizationDigest`
//   is viem `hashTypedData`, the reference for the cached digest.
// Both signers use RFC 6979 deterministic nonces and low-s normalisation, so equal inputs give byte-equal
// signatures: test/protocols/protocols-eip3009.test.ts compares them on 200 random inputs and the cached digest with
// hashTypedData as a property; the x402 and MPP tests compare whole credentials with the official clients'.
import { randomFillSync } from 'node:crypto';
import { type TypedStruct, signTypedNow, typedDigest } from './digest-signer.js';
import {
  type Address,
  type Hex,
  bytesToHex,
  getAddress,
  hashDomain,
  hashTypedData,
  hexToBytes,
  keccak256,
  recoverTypedDataAddress,
  stringToBytes,
} from 'viem';
import { signTypedData } from 'viem/accounts';

/** EIP-712 type of EIP-3009 `TransferWithAuthorization` (EIP-3009 §"Specification"). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The EIP-712 domain facts of a token: its contract and the name/version it hashes into its domain separator. */
export interface Eip712Token {
  readonly address: string;
  readonly eip712: { readonly name: string; readonly version: string };
}

export interface TransferAuthorization {
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  /** 32 random bytes for x402; keccak256(challenge.id + challenge.realm) for MPP. */
  readonly nonce: Hex;
}

export type PrivateKey = Hex | Uint8Array;

export function authorizationDomain(token: Eip712Token, chainId: number) {
  return {
    name: token.eip712.name,
    version: token.eip712.version,
    chainId,
    verifyingContract: getAddress(token.address),
  } as const;
}

export function authorizationTypedData(auth: TransferAuthorization, token: Eip712Token, chainId: number) {
  return {
    domain: authorizationDomain(token, chainId),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: getAddress(auth.from),
      to: getAddress(auth.to),
      value: auth.value,
      validAfter: auth.validAfter,
      validBefore: auth.validBefore,
      nonce: auth.nonce,
    },
  } as const;
}

/** The EIP-712 digest (`\x19\x01 || domainSeparator || hashStruct(message)`), by viem: the reference. */
export function authorizationDigest(auth: TransferAuthorization, token: Eip712Token, chainId: number): Hex {
  return hashTypedData(authorizationTypedData(auth, token, chainId));
}

/** keccak256 of the EIP-712 type string (EIP-712 §"Definition of typeHash"). */
const TYPE_HASH = keccak256(
  stringToBytes(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
  'bytes',
);
const EIP712_DOMAIN_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
} as const;

/** Domain separators by token and chain: a handful of entries (the asset table), computed once each. */
const domainSeparators = new Map<string, Uint8Array>();

function domainSeparator(token: Eip712Token, chainId: number): Uint8Array {
  const key = `${chainId}|${token.address.toLowerCase()}|${token.eip712.name}|${token.eip712.version}`;
  let sep = domainSeparators.get(key);
  if (sep === undefined) {
    const domain = authorizationDomain(token, chainId);
    sep = hexToBytes(hashDomain({ domain: { ...domain, chainId: BigInt(chainId) }, types: EIP712_DOMAIN_TYPES }));
    if (domainSeparators.size < 1024) domainSeparators.set(key, sep);
  }
  return sep;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT256_MAX = (1n << 256n) - 1n;

function putUint256(buf: Uint8Array, offset: number, value: bigint): void {
  if (value < 0n || value > UINT256_MAX) throw new RangeError('uint256 out of range');
  let v = value;
  for (let i = 31; i >= 0; i--) {
    buf[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/**
 * The authorization as EIP-712 hashes it, encoded by hand (EIP-712 §"Definition of encodeData": every field is
 * one 32-byte word; addresses left-padded) with the cached domain separator. Throws on malformed input, which
 * only a programming error can produce: callers sign values they validated.
 */
export function authorizationTyped(auth: TransferAuthorization, token: Eip712Token, chainId: number): TypedStruct {
  if (!ADDRESS.test(auth.from) || !ADDRESS.test(auth.to)) throw new TypeError('from/to must be 20-byte hex addresses');
  if (!BYTES32.test(auth.nonce)) throw new TypeError('nonce must be 32 bytes of hex');
  const struct = new Uint8Array(7 * 32);
  struct.set(TYPE_HASH, 0);
  struct.set(hexToBytes(auth.from as Hex), 32 + 12);
  struct.set(hexToBytes(auth.to as Hex), 64 + 12);
  putUint256(struct, 96, auth.value);
  putUint256(struct, 128, auth.validAfter);
  putUint256(struct, 160, auth.validBefore);
  struct.set(hexToBytes(auth.nonce), 192);
  return { domainSeparator: domainSeparator(token, chainId), encodedStruct: struct };
}

/** The same digest as `authorizationDigest` (viem), from `authorizationTyped`. */
export function authorizationDigestBytes(auth: TransferAuthorization, token: Eip712Token, chainId: number): Uint8Array {
  return typedDigest(authorizationTyped(auth, token, chainId));
}

export const keyBytes = (key: PrivateKey): Uint8Array => (typeof key === 'string' ? hexToBytes(key) : key);

/**
 * Signs with native libsecp256k1: 65 bytes `r || s || v`, v = 27 + recovery id (the form viem, the x402
 * facilitators and FiatToken's `transferWithAuthorization(v, r, s)` expect).
 */
export function signAuthorization(
  key: PrivateKey,
  auth: TransferAuthorization,
  token: Eip712Token,
  chainId: number,
): Hex {
  return bytesToHex(signTypedNow(authorizationTyped(auth, token, chainId), keyBytes(key)));
}

/** The reference signer (viem, pure JS). */
export function signAuthorizationViem(
  key: PrivateKey,
  auth: TransferAuthorization,
  token: Eip712Token,
  chainId: number,
): Promise<Hex> {
  const privateKey = typeof key === 'string' ? key : bytesToHex(key);
  return signTypedData({ privateKey, ...authorizationTypedData(auth, token, chainId) });
}

/** The address a signature recovers to under this token's domain (what the token contract checks). */
export function recoverAuthorizer(
  auth: TransferAuthorization,
  signature: Hex,
  token: Eip712Token,
  chainId: number,
): Promise<Address> {
  return recoverTypedDataAddress({ ...authorizationTypedData(auth, token, chainId), signature });
}

/** 32 random bytes as 0x-hex: the x402 `exact` nonce (the official clients use getRandomValues(32) too). */
// Nonces are drawn from a pool refilled 256 at a time: one CSPRNG call instead of one per payment. Each byte is
// handed out once, and a nonce is public the moment it is sent, so holding the next ones in memory exposes nothing.
const NONCE_POOL = Buffer.alloc(32 * 256);
let nonceOffset = NONCE_POOL.length;

export function randomNonce(): Hex {
  if (nonceOffset === NONCE_POOL.length) {
    randomFillSync(NONCE_POOL);
    nonceOffset = 0;
  }
  const hex = NONCE_POOL.toString('hex', nonceOffset, nonceOffset + 32);
  nonceOffset += 32;
  return `0x${hex}`;
}
