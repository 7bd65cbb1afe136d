// Who may call a route, in OpenAPI terms, read from the route's access declaration (shared/auth/route-callers.ts):
// its security requirement and the auth errors the declaration itself answers.
import type { CallerKind } from '../../shared/auth/caller.js';
import { CONSENT_TYPES } from '../../shared/db/entities/index.js';
import type { ErrorCode } from '../../shared/errors/catalogue.js';
import { CONSENT_WORDING } from '../../shared/oauth/consent.js';
import type { AuthorizationServerMetadata } from '../../shared/oauth/metadata.js';
import type { ListedRoute } from './listed-route.js';

/** The code a caller of each kind gets from a route that does not accept its kind (route-callers.ts `accepts`). */
const REFUSED_WITH: Readonly<Record<CallerKind, ErrorCode>> = {
  apiKey: 'BCK.AUTH.0002',
  commerce: 'BCK.OAUTH.0030',
  account_access: 'BCK.OAUTH.0030',
};

const KINDS = Object.keys(REFUSED_WITH) as CallerKind[];

export type SecurityRequirement = Record<string, string[]>;

/** Public: none (an empty list overrides nothing here: the document sets no global requirement). */
export function securityOf(access: ListedRoute['access']): SecurityRequirement[] {
  if (access.public) return [];
  return access.accepts.map((kind) => (kind === 'apiKey' ? { apiKey: [] } : { oauth: [kind] }));
}

/** The codes the declaration answers before the handler runs: no credential (401), a kind it refuses (403). */
export function authCodesOf(access: ListedRoute['access']): ErrorCode[] {
  if (access.public) return [];
  const refused = KINDS.filter((k) => !access.accepts.includes(k));
  const refusals = access.refusal !== undefined ? [access.refusal] : refused.map((k) => REFUSED_WITH[k]);
  return [access.unauthenticated ?? 'BCK.AUTH.0001', ...(refused.length === 0 ? [] : refusals)];
}

/** The two credentials: the user's API key, and a connector's OAuth access token of a consent type (its scope). */
export function securitySchemes(oauth: AuthorizationServerMetadata): Record<string, unknown> {
  return {
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: '<environment>:<random>',
      description:
        'An API key of the user, `Authorization: Bearer sandbox:...` (or `live:...`): keys are made with the CLI and are valid only in their environment. A revoked key stops working within a second.',
    },
    oauth: {
      type: 'oauth2',
      description:
        "A connector's access token (an RFC 9068 JWT, ES256, `Authorization: Bearer eyJ...`) from the token endpoint, by the authorization code flow with PKCE (S256) or the device flow (RFC 8628, `device_authorization_endpoint` of the discovery document). Public clients: no secret. Its scope is the consent type the human approved; a revoked grant stops its tokens within a second.",
      flows: {
        authorizationCode: {
          authorizationUrl: oauth.authorization_endpoint,
          tokenUrl: oauth.token_endpoint,
          refreshUrl: oauth.token_endpoint,
          scopes: Object.fromEntries(CONSENT_TYPES.map((t) => [t, CONSENT_WORDING[t]])),
        },
      },
    },
  };
}
