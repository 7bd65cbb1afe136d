// EIP-3009 signing: the native fast path (cached domain separator + libsecp256k1) must produce exactly what the
// reference (viem signTypedData / hashTypedData) produces, and the x402 spec's example signature must recover to
// its `from` under our typed-data construction.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { type Hex, bytesToHex, hexToBytes } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { NETWORKS } from '../../shared/assets.js';
import {
  type TransferAuthorization,
  authorizationDigest,
  authorizationDigestBytes,
  randomNonce,
  recoverAuthorizer,
  signAuthorization,
  signAuthorizationViem,
} from '../../shared/protocols/eip3009.js';
import specVector from '../vectors/x402-exact-evm-example.json' with { type: 'json' };

const SANDBOX = NETWORKS.sandbox;
const LIVE = NETWORKS.live;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A valid private key: 32 random bytes reduced into [1, n-1]. */
function randomKey(): Hex {
  const k = (BigInt(bytesToHex(randomBytes(32))) % (SECP256K1_N - 1n)) + 1n;
  return `0x${k.toString(16).padStart(64, '0')}`;
}

const randomAddress = (): string => bytesToHex(randomBytes(20));
const randomUint = (bits: number): bigint => BigInt(bytesToHex(randomBytes(bits / 8)));

test('native signatures equal viem signTypedData for 200 random inputs, on every token of both environments', async (t) => {
  const tokens = [
    ...SANDBOX.assets.map((a) => ({ a, chainId: SANDBOX.chainId })),
    ...LIVE.assets.map((a) => ({ a, chainId: LIVE.chainId })),
  ];
  for (let i = 0; i < 200; i++) {
    const key = randomKey();
    const { a, chainId } = tokens[i % tokens.length] ?? { a: SANDBOX.assets[0], chainId: SANDBOX.chainId };
    if (a === undefined) throw new Error('no asset');
    const auth: TransferAuthorization = {
      from: privateKeyToAccount(key).address,
      to: randomAddress(),
      value: i % 3 === 0 ? randomUint(256) : randomUint(64),
      validAfter: i % 2 === 0 ? 0n : randomUint(32),
      validBefore: randomUint(i % 5 === 0 ? 256 : 40),
      nonce: randomNonce(),
    };
    const native = signAuthorization(key, auth, a, chainId);
    const reference = await signAuthorizationViem(key, auth, a, chainId);
    if (native !== reference) t.fail(`input ${i}: native ${native} != viem ${reference}`);
    if (bytesToHex(authorizationDigestBytes(auth, a, chainId)) !== authorizationDigest(auth, a, chainId))
      t.fail(`input ${i}: digest differs`);
  }
  t.pass();
});

test('the signature is 65 bytes r || s || v with v in {27, 28} and recovers to the signer', async (t) => {
  const key = randomKey();
  const from = privateKeyToAccount(key).address;
  const usdc = SANDBOX.assets[0];
  if (usdc === undefined) throw new Error('no USDC');
  const auth = {
    from,
    to: randomAddress(),
    value: 10_000n,
    validAfter: 0n,
    validBefore: 2_000_000_000n,
    nonce: randomNonce(),
  };
  const sig = signAuthorization(hexToBytes(key), auth, usdc, SANDBOX.chainId);
  t.regex(sig, /^0x[0-9a-f]{130}$/);
  t.true(sig.endsWith('1b') || sig.endsWith('1c'));
  t.is(await recoverAuthorizer(auth, sig, usdc, SANDBOX.chainId), from);
});

test('the x402 spec example (scheme_exact_evm.md) recovers to its from under the Base Sepolia USDC domain', async (t) => {
  const a = specVector.payment.payload.authorization;
  const auth: TransferAuthorization = {
    from: a.from,
    to: a.to,
    value: BigInt(a.value),
    validAfter: BigInt(a.validAfter),
    validBefore: BigInt(a.validBefore),
    nonce: a.nonce as Hex,
  };
  const token = { address: specVector.domain.verifyingContract, eip712: specVector.domain };
  // Our asset table names the same domain for sandbox USDC.
  const usdc = SANDBOX.assets.find((x) => x.symbol === 'USDC');
  t.deepEqual(usdc?.eip712, { name: specVector.domain.name, version: specVector.domain.version });
  t.is<string | undefined, string | undefined>(usdc?.address, specVector.domain.verifyingContract);
  t.is(SANDBOX.chainId, specVector.domain.chainId);

  const signature = specVector.payment.payload.signature as Hex;
  t.is<string, string>(await recoverAuthorizer(auth, signature, token, specVector.domain.chainId), a.from);
  t.is(bytesToHex(authorizationDigestBytes(auth, token, 84532)), authorizationDigest(auth, token, 84532));
  // Under the live USDC name ("USD Coin") the same signature recovers to someone else: the domain matters.
  t.not<string, string>(
    await recoverAuthorizer(auth, signature, { ...token, eip712: { name: 'USD Coin', version: '2' } }, 84532),
    a.from,
  );
});

test('the cached digest refuses malformed input instead of hashing garbage', (t) => {
  const usdc = SANDBOX.assets[0];
  if (usdc === undefined) throw new Error('no USDC');
  const ok = {
    from: randomAddress(),
    to: randomAddress(),
    value: 1n,
    validAfter: 0n,
    validBefore: 1n,
    nonce: randomNonce(),
  };
  t.throws(() => authorizationDigestBytes({ ...ok, from: '0x1234' }, usdc, 84532));
  t.throws(() => authorizationDigestBytes({ ...ok, nonce: '0x12' }, usdc, 84532));
  t.throws(() => authorizationDigestBytes({ ...ok, value: -1n }, usdc, 84532));
  t.throws(() => authorizationDigestBytes({ ...ok, value: 1n << 256n }, usdc, 84532));
});

test('property: the cached digest equals hashTypedData for any token domain and message', (t) => {
  const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => bytesToHex(b));
  fc.assert(
    fc.property(
      hex(20),
      hex(20),
      hex(20),
      fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
      fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
      fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
      hex(32),
      fc.string({ maxLength: 40 }),
      fc.string({ maxLength: 10 }),
      fc.integer({ min: 1, max: 2 ** 40 }),
      (address, from, to, value, validAfter, validBefore, nonce, name, version, chainId) => {
        const token = { address, eip712: { name, version } };
        const auth = { from, to, value, validAfter, validBefore, nonce };
        return bytesToHex(authorizationDigestBytes(auth, token, chainId)) === authorizationDigest(auth, token, chainId);
      },
    ),
    { numRuns: Math.min(Number(process.env.FUZZ_RUNS ?? 1000), 2000) },
  );
  t.pass();
});
