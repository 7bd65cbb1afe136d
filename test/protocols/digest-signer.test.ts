// The signing threads (shared/protocols/digest-signer.ts): a payment signed in a worker thread is byte for byte
// the signature signAuthorization makes on the event loop, and viem's (the reference); many at once are each
// answered with their own; a key libsecp256k1 refuses is a rejection, not a crash; close() rejects what is pending.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { type Hex, bytesToHex, hexToBytes } from 'viem';
import { NETWORKS } from '../../shared/assets.js';
import { createDigestSigner, inlineSigner } from '../../shared/protocols/digest-signer.js';
import {
  type TransferAuthorization,
  authorizationTyped,
  signAuthorization,
  signAuthorizationViem,
} from '../../shared/protocols/eip3009.js';

const SANDBOX = NETWORKS.sandbox;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const USDC = SANDBOX.assets.find((a) => a.symbol === 'USDC');
if (USDC === undefined) throw new Error('no sandbox USDC');

function randomKey(): Hex {
  const k = (BigInt(bytesToHex(randomBytes(32))) % (SECP256K1_N - 1n)) + 1n;
  return `0x${k.toString(16).padStart(64, '0')}`;
}

function randomAuth(): TransferAuthorization {
  return {
    from: bytesToHex(randomBytes(20)),
    to: bytesToHex(randomBytes(20)),
    value: BigInt(bytesToHex(randomBytes(8))),
    validAfter: 0n,
    validBefore: 1_900_000_000n,
    nonce: bytesToHex(randomBytes(32)),
  };
}

test('signatures from two signing threads equal signAuthorization and viem, 300 at once, each to its caller', async (t) => {
  const signer = createDigestSigner(2);
  try {
    const cases = Array.from({ length: 300 }, () => ({ key: randomKey(), auth: randomAuth() }));
    const threaded = await Promise.all(
      cases.map(async ({ key, auth }) =>
        bytesToHex(await signer.sign(authorizationTyped(auth, USDC, SANDBOX.chainId), hexToBytes(key))),
      ),
    );
    for (const [i, { key, auth }] of cases.entries()) {
      t.is(threaded[i], signAuthorization(key, auth, USDC, SANDBOX.chainId), `case ${i}`);
    }
    // The reference, on a sample (viem is ~1 ms a signature).
    for (const [i, { key, auth }] of cases.slice(0, 20).entries()) {
      t.is(threaded[i], await signAuthorizationViem(key, auth, USDC, SANDBOX.chainId), `viem case ${i}`);
    }
  } finally {
    await signer.close();
  }
});

test('the inline signer gives the same bytes; the caller keeps its key (the thread signs a copy and wipes it)', async (t) => {
  const signer = createDigestSigner(1);
  try {
    const key = randomKey();
    const keyBytes = hexToBytes(key);
    const typed = authorizationTyped(randomAuth(), USDC, SANDBOX.chainId);
    const [a, b] = await Promise.all([signer.sign(typed, keyBytes), inlineSigner.sign(typed, keyBytes)]);
    t.deepEqual(a, b);
    t.is(a.length, 65);
    t.true(a[64] === 27 || a[64] === 28);
    t.is(bytesToHex(keyBytes), key);
  } finally {
    await signer.close();
  }
});

test('a key libsecp256k1 refuses (zero, or >= n) is a rejection on both signers; the thread keeps serving', async (t) => {
  const signer = createDigestSigner(1);
  try {
    const typed = authorizationTyped(randomAuth(), USDC, SANDBOX.chainId);
    for (const bad of [new Uint8Array(32), hexToBytes(`0x${SECP256K1_N.toString(16)}`)]) {
      await t.throwsAsync(signer.sign(typed, bad), { message: /signing failed/ });
      await t.throwsAsync(inlineSigner.sign(typed, bad));
    }
    t.is((await signer.sign(typed, hexToBytes(randomKey()))).length, 65);
  } finally {
    await signer.close();
  }
});

test('close() rejects signatures still pending and refuses new ones', async (t) => {
  const signer = createDigestSigner(1);
  const typed = authorizationTyped(randomAuth(), USDC, SANDBOX.chainId);
  const pending = Array.from({ length: 50 }, () => signer.sign(typed, hexToBytes(randomKey())));
  await signer.close();
  const settled = await Promise.allSettled(pending);
  t.true(settled.every((s) => s.status === 'rejected'));
  await t.throwsAsync(signer.sign(typed, hexToBytes(randomKey())), { message: /closed/ });
});

test('one key array passed to several signatures in one turn signs each (postMessage shares a repeated array)', async (t) => {
  const signer = createDigestSigner(1);
  try {
    const key = randomKey();
    const bytes = hexToBytes(key);
    const auths = [randomAuth(), randomAuth(), randomAuth()];
    const sigs = await Promise.all(
      auths.map((auth) => signer.sign(authorizationTyped(auth, USDC, SANDBOX.chainId), bytes)),
    );
    for (const [i, auth] of auths.entries())
      t.is(bytesToHex(sigs[i] ?? new Uint8Array()), signAuthorization(key, auth, USDC, SANDBOX.chainId));
    t.is(bytesToHex(bytes), key, 'the caller keeps its key');
  } finally {
    await signer.close();
  }
});
