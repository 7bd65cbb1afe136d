// The authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636), decided by the signed-in human: `POST
// /oauth/authorize` with their API key, which the consent page calls too (one implementation of the rules).
//
// Checked in the order that decides where an error may go: client and redirect URI first, since until both are
// known good nothing may be sent to the redirect URI (RFC 6749 §4.1.2.1: an error page, never a redirect); then
// PKCE, the consent type and the terms, whose errors the consent page sends back to the connector.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import { CONSENT_TYPES, type TokenAudience } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { line } from '../text.js';
import { type ClientView, enabledClient } from './clients.js';
import {
  ConsentCents,
  ConsentCurrency,
  ConsentDuration,
  type ConsentTerms,
  ConsentWallet,
  DEFAULT_CONSENT_CENTS,
  DEFAULT_CONSENT_CURRENCY,
  DEFAULT_CONSENT_DURATION_SECS,
  DEFAULT_CONSENT_TYPE,
  consentFunding,
  newGrant,
} from './consent.js';
import { CodeChallenge } from './pkce.js';
import { requestedAudience, scopeRefusedAt } from './resource.js';
import { addCode } from './store/codes.js';

/** RFC 6749 §4.1.2 recommends a short life; ten minutes is the maximum. Sixty seconds is enough for a redirect. */
export const CODE_TTL_SECS = 60;

/** The fields of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, and the consent terms). */
export const AUTHORIZATION_FIELDS = [
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'spending_limit_cents',
  'currency',
  'duration_secs',
  'resource',
] as const;

const Target = z.object({ client_id: line(200).min(1), redirect_uri: line(2000).min(1) });

const Terms = z.object({
  code_challenge: CodeChallenge,
  // RFC 7636 §4.3 makes `plain` the default when the method is absent: absent is refused as plain is.
  code_challenge_method: z.literal('S256', 'must be S256'),
  state: line(1000).optional(),
  // Absent: commerce on the default terms (consent.ts), which the human sees and may lower: a client that knows
  // nothing of caps (an MCP host) can still ask.
  scope: z.enum(CONSENT_TYPES, `must be one of ${CONSENT_TYPES.join(', ')}`).default(DEFAULT_CONSENT_TYPE),
  spending_limit_cents: ConsentCents.optional(),
  currency: ConsentCurrency.default(DEFAULT_CONSENT_CURRENCY),
  duration_secs: ConsentDuration.optional(),
});

/** An authorization request whose client and redirect URI are good: errors from here on may be redirected. */
export interface AuthorizationTarget {
  readonly client: ClientView;
  readonly redirectUri: string;
}

export interface AuthorizationRequest extends AuthorizationTarget {
  readonly codeChallenge: string;
  readonly state: string | undefined;
  readonly terms: ConsentTerms;
  /** The resource the tokens are for (RFC 8707): the API unless the request named the MCP endpoint. */
  readonly audience: TokenAudience;
}

const issuesOf = (e: z.ZodError) =>
  e.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));

/** The client and redirect URI of a request: 400 BCK.HTTP.0400, BCK.OAUTH.0016 or BCK.OAUTH.0017. */
export async function authorizationTarget(ctx: ServiceContext, raw: unknown): Promise<AuthorizationTarget> {
  const t = Target.safeParse(raw);
  if (!t.success) {
    const issues = issuesOf(t.error);
    throw new AppError('BCK.HTTP.0400', {
      details: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
      params: { issues },
    });
  }
  const client = await enabledClient(ctx, t.data.client_id);
  // Exact match (RFC 6749 §3.1.2.3, RFC 8252 §8.4): no prefix, no normalization.
  if (!client.redirectUris.includes(t.data.redirect_uri)) {
    throw new AppError('BCK.OAUTH.0017', {
      details: 'redirect_uri is not registered for this client',
      params: {
        clientId: client.clientId,
      },
    });
  }
  return { client, redirectUri: t.data.redirect_uri };
}

/**
 * The whole request, checked: BCK.OAUTH.0040 for a `resource` this service does not serve (RFC 8707 §2);
 * BCK.OAUTH.0018 for PKCE, a consent type the client (or the resource) may not ask for, or terms out of range;
 * 403 BCK.OAUTH.0025 for account-level access by a client that is not verified and account-level.
 */
export async function authorizationRequest(ctx: ServiceContext, raw: unknown): Promise<AuthorizationRequest> {
  const target = await authorizationTarget(ctx, raw);
  const resource = requestedAudience(ctx.config, raw);
  if (!resource.ok) throw new AppError('BCK.OAUTH.0040', { details: resource.reason });
  const audience = resource.audience ?? 'api';
  const r = Terms.safeParse(raw);
  if (!r.success) {
    const issues = issuesOf(r.error);
    throw new AppError('BCK.OAUTH.0018', {
      details: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
      params: { issues },
    });
  }
  const q = r.data;
  const { client } = target;
  if (!client.allowedConsentTypes.includes(q.scope)) {
    throw new AppError('BCK.OAUTH.0018', {
      details: `this client may not ask for ${q.scope} consent`,
      params: { scope: q.scope },
    });
  }
  const refused = scopeRefusedAt(audience, q.scope);
  if (refused !== undefined) throw new AppError('BCK.OAUTH.0018', { details: refused, params: { scope: q.scope } });
  if (q.scope === 'account_access' && !(client.verified && client.accountLevel)) {
    throw new AppError('BCK.OAUTH.0025');
  }
  return {
    ...target,
    codeChallenge: q.code_challenge,
    state: q.state,
    audience,
    terms: {
      consentType: q.scope,
      spendingLimitCents: q.spending_limit_cents ?? DEFAULT_CONSENT_CENTS,
      currency: q.currency,
      durationSecs: q.duration_secs ?? DEFAULT_CONSENT_DURATION_SECS,
    },
  };
}

/** The redirect URI with the response parameters and `iss` (RFC 9207 §2: the client checks who answered). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  url.searchParams.append('iss', issuer);
  return url.href;
}

export type AuthorizeResult =
  | { readonly approved: true; readonly code: string; readonly redirectTo: string; readonly grantId: string }
  | { readonly approved: false; readonly redirectTo: string };

/**
 * The human's decision. Approval creates the grant, its delegation and the code in ONE transaction. `terms` may
 * lower the cap or the duration the connector asked for (the consent page lets the human do so), never raise them.
 */
export async function decide(
  ctx: ServiceContext,
  user: { userId: string },
  req: AuthorizationRequest,
  approve: boolean,
  wallet: z.output<typeof ConsentWallet> = {},
): Promise<AuthorizeResult> {
  const issuer = ctx.config.publicUrl;
  if (!approve) {
    const params = { error: 'access_denied', error_description: 'the user denied the request', state: req.state };
    return { approved: false, redirectTo: redirectWith(req.redirectUri, params, issuer) };
  }
  const funding = await consentFunding(ctx, user.userId, req.terms.consentType, wallet);
  const code = randomToken(32);
  const now = ctx.now();
  const grantId = await ctx.db.em().transactional(async (em) => {
    const grant = await newGrant(em, { userId: user.userId, clientId: req.client.clientId }, req.terms, now, funding);
    addCode(em, {
      codeHash: sha256Hex(code),
      grantId: grant.grantId,
      clientId: req.client.clientId,
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      audience: req.audience,
      expiresAt: new Date(now.getTime() + CODE_TTL_SECS * 1000),
      createdAt: now,
    });
    await em.flush();
    return grant.grantId;
  });
  return {
    approved: true,
    code,
    grantId,
    redirectTo: redirectWith(req.redirectUri, { code, state: req.state }, issuer),
  };
}

/** The human's decision in `POST /oauth/authorize` (absent: approve). */
export const Approve = z.object({ approve: z.boolean().default(true) });

/** `POST /oauth/authorize`: the JSON body as the interface gives it. */
export async function authorize(ctx: ServiceContext, user: { userId: string }, raw: unknown): Promise<AuthorizeResult> {
  const req = await authorizationRequest(ctx, raw);
  const approve = Approve.safeParse(raw);
  if (!approve.success) throw new AppError('BCK.HTTP.0400', { details: 'approve: must be a boolean' });
  const wallet = ConsentWallet.safeParse(raw);
  if (!wallet.success)
    throw new AppError('BCK.HTTP.0400', { details: 'organization_wallet_id and group_id: must be UUIDs' });
  return decide(ctx, user, req, approve.data.approve, wallet.data);
}

/** The request's fields, as the API description shows them. */
export { Target as AuthorizationClientFields, Terms as AuthorizationTerms };
