// The OAuth token endpoint (RFC 6749 §3.2): tokens issued by grant type, requests refused by their error.
import { Counter } from 'prom-client';
import { OAuthProtocolError } from '../oauth/protocol-error.js';
import { OAUTH_ERRORS, bounded, grantTypeLabel } from './labels.js';
import { PREFIX, registry } from './registry.js';

const issued = new Counter({
  name: `${PREFIX}oauth_tokens_issued_total`,
  help: 'Token responses issued by the token endpoint, by grant type (authorization_code, refresh_token, device_code).',
  labelNames: ['grant_type'] as const,
  registers: [registry],
});

const refused = new Counter({
  name: `${PREFIX}oauth_token_refusals_total`,
  help:
    'Token requests refused, by grant type and RFC 6749 / 8628 error (authorization_pending and slow_down are ' +
    "a device's polls; server_error: ours).",
  labelNames: ['grant_type', 'error'] as const,
  registers: [registry],
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
