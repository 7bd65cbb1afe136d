// The OAuth token endpoint's metrics (RFC 6749 §3.2): tokens issued by grant type, requests refused by their error.
// Beside the endpoint, not in shared/metrics/: the label sets are the protocol's own codes.
import { Counter } from 'prom-client';
import { OTHER, bounded } from '../metrics/labels.js';
import { PREFIX, collectors } from '../metrics/collectors.js';
import { OAuthProtocolError, PROTOCOL_ERROR_CODES } from './protocol-error.js';

/** RFC 6749 §4.1.3, §6 and RFC 8628 §3.4's grant_type values, by a short name. */
export const OAUTH_GRANT_TYPES: ReadonlyMap<string, string> = new Map([
  ['authorization_code', 'authorization_code'],
  ['refresh_token', 'refresh_token'],
  ['urn:ietf:params:oauth:grant-type:device_code', 'device_code'],
]);

const grantTypeLabel = (grantType: unknown): string =>
  (typeof grantType === 'string' ? OAUTH_GRANT_TYPES.get(grantType) : undefined) ?? OTHER;

/** Plus `server_error` (RFC 6749 §5.2's name for what is not the client's fault: our 5xx). */
export const OAUTH_ERRORS: ReadonlySet<string> = new Set([...PROTOCOL_ERROR_CODES, 'server_error']);

const issued = new Counter({
  name: `${PREFIX}oauth_tokens_issued_total`,
  help: 'Token responses issued by the token endpoint, by grant type (authorization_code, refresh_token, device_code).',
  labelNames: ['grant_type'] as const,
  registers: [collectors],
});

const refused = new Counter({
  name: `${PREFIX}oauth_token_refusals_total`,
  help:
    'Token requests refused, by grant type and RFC 6749 / 8628 error (authorization_pending and slow_down are ' +
    "a device's polls; server_error: ours).",
  labelNames: ['grant_type', 'error'] as const,
  registers: [collectors],
});

/** The grant_type a token request names (the body is untrusted: only a known value becomes a label). */
function grantTypeOf(body: unknown): string {
  return grantTypeLabel(typeof body === 'object' && body !== null ? Reflect.get(body, 'grant_type') : undefined);
}

/** Runs the token request, counting what it ended in. */
export async function countedTokenRequest<T>(body: unknown, answer: () => Promise<T>): Promise<T> {
  const grant_type = grantTypeOf(body);
  try {
    const tokens = await answer();
    issued.inc({ grant_type });
    return tokens;
  } catch (err) {
    refused.inc({
      grant_type,
      error: err instanceof OAuthProtocolError ? bounded(OAUTH_ERRORS, err.error) : 'server_error',
    });
    throw err;
  }
}
