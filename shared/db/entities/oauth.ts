import { defineEntity, p } from '@mikro-orm/core';

/** What a connector may ask a user to consent to (shared/oauth/consent.ts). */
export const CONSENT_TYPES = ['commerce', 'account_access'] as const;
export type ConsentType = (typeof CONSENT_TYPES)[number];

/**
 * A pre-registered public OAuth client: a connector (an agent framework, an MCP client) that asks users for
 * capped consent. Public means no secret: PKCE binds each code to the client instance that asked for it. The
 * operator registers clients with the CLI (`oauth-clients create`). `redirectUris` and `allowedConsentTypes` are
 * JSON arrays, read back through their schemas (shared/oauth/clients.ts).
 */
export const OAuthClient = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_client',
  properties: {
    clientId: p.string().primary(),
    name: p.string(),
    /** JSON array of absolute URIs, matched exactly (RFC 6749 §3.1.2.3 / RFC 8252 §8.4, no partial matching). */
    redirectUris: p.text(),
    /** The operator checked who runs this connector: its name is shown as verified on the consent page. */
    verified: p.boolean().default(false),
    /** May ask for account-level access (`account_access`), given it is also verified. */
    accountLevel: p.boolean().default(false),
    /** JSON array of ConsentType. */
    allowedConsentTypes: p.text(),
    /** Set when disabled: the client is then unknown to every OAuth endpoint. */
    disabledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
