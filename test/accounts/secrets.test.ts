// Secrets at rest (shared/crypto/secrets.ts): AES-256-GCM under an HKDF-derived key, and the generated
// DATA_DIR/secrets.key that concurrently starting processes must agree on.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import fc from 'fast-check';
import { resolveSecretsKey, secretBox } from '../../shared/crypto/secrets.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'k'.repeat(32);

test('seal/open round-trips any string; the same plaintext never seals the same way twice', (t) => {
  const box = secretBox(KEY);
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (plain) => {
      const a = box.seal(plain);
      const b = box.seal(plain);
      return a !== b && box.open(a) === plain && box.open(b) === plain;
    }),
    { numRuns: 300 },
  );
  const key = `0x${'ab'.repeat(32)}`;
  const sealed = box.seal(key);
  t.regex(sealed, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.false(sealed.includes('abab'), 'ciphertext does not show the plaintext');
  t.is(box.open(sealed), key);
  t.is(box.open(box.seal('')), '');
});

test('another SECRETS_KEY cannot open a sealed secret', (t) => {
  const sealed = secretBox(KEY).seal('wallet private key');
  t.throws(() => secretBox(`${KEY}x`).open(sealed));
  t.throws(() => secretBox('K'.repeat(32)).open(sealed));
});

test('the key check value: one per key, deterministic, and neither the key nor a plain hash of it', (t) => {
  fc.assert(
    fc.property(fc.string({ minLength: 32, maxLength: 80 }), fc.string({ minLength: 32, maxLength: 80 }), (a, b) => {
      const check = secretBox(a).keyCheck;
      if (secretBox(a).keyCheck !== check) return false;
      if (a !== b && secretBox(b).keyCheck === check) return false;
      const hashes = ['hex', 'base64', 'base64url'].map((e) =>
        createHash('sha256')
          .update(a)
          .digest(e as 'hex' | 'base64' | 'base64url'),
      );
      return !check.includes(a) && hashes.every((h) => !check.includes(h));
    }),
    { numRuns: 200 },
  );
  t.regex(secretBox(KEY).keyCheck, /^v1\.[A-Za-z0-9_-]{43}$/);
  // The check value opens nothing: it is not a sealed value of the box.
  t.throws(() => secretBox(KEY).open(secretBox(KEY).keyCheck));
});

test('any change to iv, ciphertext or tag is detected (GCM authentication); malformed input throws', (t) => {
  const box = secretBox(KEY);
  const sealed = box.seal('a secret worth protecting');
  const parts = sealed.split('.');
  const flip = (s: string, i: number): string => {
    const buf = Buffer.from(s, 'base64url');
    buf[i % buf.length] = (buf[i % buf.length] ?? 0) ^ 0x01;
    return buf.toString('base64url');
  };
  for (const part of [1, 2, 3]) {
    for (const i of [0, 5, 11]) {
      const tampered = parts.map((p, j) => (j === part ? flip(p, i) : p)).join('.');
      t.throws(() => box.open(tampered), undefined, `part ${part} byte ${i}`);
    }
  }
  // Truncated tag, dropped parts, wrong version, garbage.
  t.throws(() => box.open([parts[0], parts[1], parts[2], (parts[3] ?? '').slice(0, 10)].join('.')));
  t.throws(() => box.open(parts.slice(0, 3).join('.')));
  t.throws(() => box.open(['v2', ...parts.slice(1)].join('.')), { message: /unsupported/ });
  for (const garbage of ['', 'v1', 'v1...', 'not sealed at all']) t.throws(() => box.open(garbage), undefined, garbage);
});

// Known bug (reported): Node accepts GCM tags of 4..16 bytes unless authTagLength is given, so a sealed secret
// whose tag is cut to its first 4 bytes still opens: forging then takes 2^32 tries instead of 2^128. The fix is
// `createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 })` in shared/crypto/secrets.ts; then make this a
// plain test.
test('a truncated authentication tag is refused', (t) => {
  const box = secretBox(KEY);
  const [version, iv, data, tag] = box.seal('a secret worth protecting').split('.');
  const full = Buffer.from(tag ?? '', 'base64url');
  for (const n of [4, 8, 12, 15]) {
    const cut = [version, iv, data, full.subarray(0, n).toString('base64url')].join('.');
    t.throws(() => box.open(cut), undefined, `${n}-byte tag`);
  }
});

test('a configured SECRETS_KEY is used as is and nothing is written', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'payroute-secrets-'));
  const dir = join(base, 'data');
  t.deepEqual(resolveSecretsKey(KEY, dir), { key: KEY, generated: false });
  t.throws(() => statSync(dir), undefined, 'DATA_DIR not even created');
  rmSync(base, { recursive: true, force: true });
});

test('unset: a random key is generated once into DATA_DIR/secrets.key (0600) and reused', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'payroute-secrets-'));
  try {
    const dir = join(base, 'nested', 'data');
    const first = resolveSecretsKey(undefined, dir);
    t.true(first.generated);
    t.true(first.key.length >= 32);
    const file = join(dir, 'secrets.key');
    t.is(readFileSync(file, 'utf8'), first.key);
    t.is(statSync(file).mode & 0o777, 0o600, 'readable by the service user only');
    t.is(resolveSecretsKey(undefined, dir).key, first.key, 'two calls agree');
    // Another directory is another key.
    t.not(resolveSecretsKey(undefined, join(base, 'other')).key, first.key);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('an incomplete key file is an error, never a weak key', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'payroute-secrets-'));
  try {
    writeFileSync(join(dir, 'secrets.key'), 'short');
    t.throws(() => resolveSecretsKey(undefined, dir), { message: /incomplete/ });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function resolveInChild(dir: string): Promise<string> {
  const code = `import { resolveSecretsKey } from './shared/crypto/secrets.js';
process.stdout.write(resolveSecretsKey(undefined, ${JSON.stringify(dir)}).key);`;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', fail);
    child.on('close', (c) => (c === 0 ? done(out) : fail(new Error(`exit ${c}: ${err}`))));
  });
}

test('processes starting together agree on one generated key (exclusive create)', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'payroute-secrets-'));
  try {
    const dir = join(base, 'data');
    const keys = await Promise.all([1, 2, 3, 4].map(() => resolveInChild(dir)));
    t.is(new Set(keys).size, 1, keys.join('\n'));
    t.is(readFileSync(join(dir, 'secrets.key'), 'utf8'), keys[0] ?? '');
    // And a box from one process opens what another sealed.
    t.is(secretBox(keys[1] ?? '').open(secretBox(keys[0] ?? '').seal('shared')), 'shared');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('mac: the same for every process of a deployment, another for another key or another purpose', (t) => {
  const box = secretBox(KEY);
  const mac = box.mac('client-address', '192.0.2.7');
  t.regex(mac, /^[A-Za-z0-9_-]{43}$/);
  t.is(secretBox(KEY).mac('client-address', '192.0.2.7'), mac);
  t.not(secretBox(`${KEY}x`).mac('client-address', '192.0.2.7'), mac);
  t.not(box.mac('another-purpose', '192.0.2.7'), mac);
  t.not(box.mac('client-address', '192.0.2.8'), mac);
});
