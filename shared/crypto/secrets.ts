// Secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256 from SECRETS_KEY; and MACs between the
// processes of one deployment (which share SECRETS_KEY), each purpose under a key of its own.
// Unset SECRETS_KEY (sandbox only): a random one is created once in DATA_DIR with an exclusive create, so
// processes starting together agree on the same file.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const VERSION = 'v1';

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
  /**
   * HMAC-SHA256 of `value` (base64url) under a key derived for `purpose` alone, so a MAC made for one purpose is
   * never valid for another. Compare MACs with secretsEqual.
   */
  mac(purpose: string, value: string): string;
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
        throw new Error('unsupported sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Returns SECRETS_KEY, or the generated one in DATA_DIR; `generated` tells the caller to warn. */
export function resolveSecretsKey(
  configured: string | undefined,
  dataDir: string,
): { key: string; generated: boolean } {
  if (configured !== undefined) return { key: configured, generated: false };
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.key');
  try {
    writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // A concurrent creator may still be writing: a 43-char key is written in one write(2), but read until complete.
  for (let i = 0; i < 50; i++) {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length >= 32) return { key, generated: true };
  }
  throw new Error(`secrets key file ${file} is incomplete`);
}
