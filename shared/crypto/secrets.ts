// Secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256 from SECRETS_KEY; and MACs between the
// processes of one deployment (which share SECRETS_KEY), each purpose under a key of its own.
// Unset SECRETS_KEY (sandbox only): a random one is created once in DATA_DIR with an exclusive create, so
// processes starting together agree on the same file.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvariantError } from '../errors/invariant.js';

const VERSION = 'v1';
/** Shortest key accepted anywhere (SECRETS_KEY, SECRETS_KEY_PREVIOUS, a key file); the generated one has 43. */
export const MIN_SECRETS_KEY_LENGTH = 32;

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
  /**
   * The check value of this box's key, stored beside the data (shared/secrets/key-check.ts) so that a process
   * started with another key is refused instead of serving 500s on every sealed read.
   */
  readonly keyCheck: string;
  /**
   * HMAC-SHA256 of `value` (base64url) under a key derived for `purpose` alone, so a MAC made for one purpose is
   * never valid for another. Compare MACs with secretsEqual.
   */
  mac(purpose: string, value: string): string;
}

/**
 * The key's check value: HMAC-SHA256 of a fixed label under a key of its own, derived from SECRETS_KEY with HKDF
 * (another `info` than the encryption key's). Why this rather than a sealed known constant:
 * - the encryption key is never used on a known plaintext, and the check key is used for nothing else: HKDF's
 *   outputs are independent, so the stored value tells nothing about the key that seals the data;
 * - it is deterministic (no IV to get wrong) and compared in constant time, without decrypting anything.
 * What it cannot avoid: whoever holds a copy of the database can test guesses of SECRETS_KEY against it, exactly as
 * against any sealed row (GCM authentication rejects a wrong key) — it adds no new way in. That is why a key has at
 * least 32 characters and the generated one 256 random bits. Never store the key, nor a plain hash of it: a bare
 * SHA-256 of the key would match the same value wherever else that key were hashed.
 */
function keyCheckOf(secretsKey: string): string {
  const checkKey = Buffer.from(hkdfSync('sha256', secretsKey, 'payroute', 'payroute/secrets/key-check/v1', 32));
  const mac = createHmac('sha256', checkKey).update('payroute: this key opens the sealed secrets', 'utf8').digest();
  return `${VERSION}.${mac.toString('base64url')}`;
}

export function secretBox(secretsKey: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secretsKey, 'payroute', 'payroute/secrets/aes-256-gcm/v1', 32));
  const macKeys = new Map<string, Buffer>();
  const macKey = (purpose: string): Buffer => {
    let k = macKeys.get(purpose);
    if (k === undefined) {
      k = Buffer.from(hkdfSync('sha256', secretsKey, 'payroute', `payroute/mac/${purpose}/v1`, 32));
      macKeys.set(purpose, k);
    }
    return k;
  };
  return {
    keyCheck: keyCheckOf(secretsKey),
    mac(purpose, value) {
      return createHmac('sha256', macKey(purpose)).update(value, 'utf8').digest('base64url');
    },
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString('base64url'), data.toString('base64url'), tag.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, data, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || data === undefined || tag === undefined) {
        throw new InvariantError('unsupported sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Where the key comes from, to name it in messages (never its value). */
export type SecretsKeySource = { readonly kind: 'env' } | { readonly kind: 'file'; readonly path: string };

/** The generated key's file. */
export const generatedKeyPath = (dataDir: string): string => join(dataDir, 'secrets.key');

/** How an operator recognises the key in a message: the variable, or the generated file (its path). */
export function describeKeySource(source: SecretsKeySource): string {
  return source.kind === 'env'
    ? 'SECRETS_KEY (set in the environment or .env)'
    : `the generated key in DATA_DIR/secrets.key (${source.path}; used because SECRETS_KEY is unset)`;
}

/** Returns SECRETS_KEY, or the generated one in DATA_DIR; `generated` tells the caller to warn. */
export function resolveSecretsKey(
  configured: string | undefined,
  dataDir: string,
): { key: string; generated: boolean } {
  if (configured !== undefined) return { key: configured, generated: false };
  mkdirSync(dataDir, { recursive: true });
  const file = generatedKeyPath(dataDir);
  try {
    writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // A concurrent creator may still be writing: a 43-char key is written in one write(2), but read until complete.
  for (let i = 0; i < 50; i++) {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length >= MIN_SECRETS_KEY_LENGTH) return { key, generated: true };
  }
  throw new Error(`secrets key file ${file} is incomplete`);
}

/** What a key file holds, for `secrets rotate --old-key-file`: the key, or why it cannot be one. */
export function readKeyFile(path: string): { ok: true; key: string } | { ok: false; reason: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { ok: false, reason: `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  // A trailing newline is how editors and `echo` write a file; it is not part of the key.
  const key = text.replace(/[\r\n]+$/, '');
  if (key.length < MIN_SECRETS_KEY_LENGTH)
    return { ok: false, reason: `${path} does not hold a key of at least ${MIN_SECRETS_KEY_LENGTH} characters` };
  return { ok: true, key };
}
