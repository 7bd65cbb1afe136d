// Self-signed certificates for tests that serve https from the test process (openssl, EC P-256).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Writes a certificate for `name` with the subjectAltName `san` (e.g. `DNS:localhost,IP:127.0.0.1`) and its key
 *  into `dir`; throws when openssl is missing. */
export function writeSelfSigned(
  dir: string,
  name: string,
  san: string,
  days = 2,
): { certPath: string; keyPath: string } {
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${san}`,
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return { certPath, keyPath };
}
