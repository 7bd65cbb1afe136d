// Resource indicators (RFC 8707): the `resource` parameter of an authorization, device authorization or token
// request names what the access tokens are for, and becomes their `aud`. This service serves two resources, the
// API ({host_url}/api/v1, the default when none is named, as before resource indicators) and the MCP endpoint
// ({host_url}/mcp); each process's credential check accepts only the tokens of its own.
import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { ConsentType, TokenAudience } from '../db/entities/index.js';
import { audienceOf } from './metadata.js';
import { invalidTarget } from './protocol-error.js';

/** The `resource` field of a request, whatever it holds: a repeated query or form field arrives as an array. */
const ResourceField = z.object({ resource: z.unknown().optional() });

export type RequestedAudience =
  | { readonly ok: true; readonly audience: TokenAudience | undefined }
  | { readonly ok: false; readonly reason: string };

/**
 * The audience a request names (undefined when it names none), or why its `resource` is refused (RFC 8707 §2:
 * `invalid_target`). Exactly one of this service's resource identifiers, character for character: no
 * normalization, since the identifier is compared with what the resource server expects. Several `resource`
 * parameters (RFC 8707 §2 allows them, for tokens valid at several resources) are refused rather than guessed
 * between: a token of this service is for one resource, and the two check different `aud`s.
 */
export function requestedAudience(config: Pick<Config, 'publicUrl'>, raw: unknown): RequestedAudience {
  const field = ResourceField.safeParse(raw);
  const value = field.success ? field.data.resource : undefined;
  if (value === undefined) return { ok: true, audience: undefined };
  if (Array.isArray(value)) return { ok: false, reason: 'resource: name one resource, not several' };
  const audience = typeof value === 'string' ? audienceOf(config, value) : undefined;
  if (audience === undefined) {
    return { ok: false, reason: 'resource: this service serves its API and its MCP endpoint only' };
  }
  return { ok: true, audience };
}

/**
 * Why a consent type may not be asked for at a resource, or undefined. The MCP endpoint pays merchants within a
 * commerce consent and does nothing else: account_access acts on the user's account through the API, and no MCP
 * tool takes it. Refused as a scope (invalid_scope), not a target: the resource is one this service serves, it is
 * the scope that is not available there (RFC 6749 §5.2 "invalid, unknown, or malformed" scope for the request).
 */
export function scopeRefusedAt(audience: TokenAudience, consentType: ConsentType): string | undefined {
  return audience === 'mcp' && consentType !== 'commerce' ? 'the MCP resource takes commerce consent only' : undefined;
}

/**
 * The audience a token request's tokens are for: the one authorized (stored on the code, device code or refresh
 * token). A `resource` may repeat it; naming another, or one this service does not serve, is `invalid_target`
 * (RFC 8707 §2.2: a token request may only name resources the grant was authorized for).
 */
export function tokenAudience(
  config: Pick<Config, 'publicUrl'>,
  body: unknown,
  authorized: TokenAudience,
): TokenAudience {
  const requested = requestedAudience(config, body);
  if (!requested.ok) throw invalidTarget(requested.reason);
  if (requested.audience !== undefined && requested.audience !== authorized) {
    throw invalidTarget('resource: not the resource this grant was authorized for');
  }
  return authorized;
}
