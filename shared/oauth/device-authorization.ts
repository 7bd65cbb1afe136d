// The device authorization request (RFC 8628 §3.1-3.2): a connector without a browser (a CLI, an agent on a
// server) asks for consent; the human approves it on the device page with the user code. Both codes are stored
// hashed. The terms are what the connector asks for: the human may lower the cap, never raise it. The endpoint is
// public, so how many codes one address and one client may start is limited (device-rate-limit.ts).
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import { addressBucket } from '../client-address.js';
import { CONSENT_TYPES } from '../db/entities/index.js';
import { emSql, isUniqueViolation } from '../db/sql.js';
import { line } from '../text.js';
import {
  ConsentCents,
  ConsentCurrency,
  ConsentDuration,
  DEFAULT_CONSENT_CENTS,
  DEFAULT_CONSENT_CURRENCY,
  DEFAULT_CONSENT_DURATION_SECS,
  DEFAULT_CONSENT_TYPE,
} from './consent.js';
import { DeviceRateLimited, takeDeviceAuthorization } from './device-rate-limit.js';
import { invalidScope, invalidTarget, temporarilyUnavailable } from './protocol-error.js';
import { requestedAudience, scopeRefusedAt } from './resource.js';
import { insertDeviceCode } from './store/device-codes.js';
import { parseTokenRequest, tokenClient } from './token-request.js';
import { displayUserCode, newUserCode } from './user-code.js';

/** RFC 8628 §3.2: how long the codes live (the polling interval is OAUTH_DEVICE_POLL_INTERVAL_SECS). */
export const DEVICE_CODE_TTL_SECS = 600;

const Body = z.object({
  client_id: line(200).min(1),
  // Absent: commerce, as at the authorization endpoint (consent.ts's defaults).
  scope: line(200).default(DEFAULT_CONSENT_TYPE),
  spending_limit_cents: ConsentCents.optional(),
  currency: ConsentCurrency.default(DEFAULT_CONSENT_CURRENCY),
  duration_secs: ConsentDuration.optional(),
});

export interface DeviceAuthorizationResponse {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete: string;
  readonly expires_in: number;
  readonly interval: number;
}

/**
 * Starts a device authorization for a request from `address` (the client address: shared/client-address.ts). The
 * code is stored in the transaction that takes it from the address's and the client's rate windows; past either,
 * 429 temporarily_unavailable with Retry-After, and nothing is stored.
 */
export async function startDeviceAuthorization(
  ctx: ServiceContext,
  body: unknown,
  address: string,
): Promise<DeviceAuthorizationResponse> {
  const req = parseTokenRequest(Body, body);
  const client = await tokenClient(ctx, req.client_id);
  const target = requestedAudience(ctx.config, body);
  if (!target.ok) throw invalidTarget(target.reason);
  const audience = target.audience ?? 'api';
  const scope = CONSENT_TYPES.find((t) => t === req.scope);
  if (scope === undefined) throw invalidScope(`scope must be one of ${CONSENT_TYPES.join(', ')}`);
  if (!client.allowedConsentTypes.includes(scope)) throw invalidScope(`this client may not ask for ${scope} consent`);
  if (scope === 'account_access' && !(client.verified && client.accountLevel)) {
    throw invalidScope('account_access needs a verified, account-level client');
  }
  const refused = scopeRefusedAt(audience, scope);
  if (refused !== undefined) throw invalidScope(refused);
  const c = ctx.config;
  const limits = {
    perAddress: c.OAUTH_DEVICE_AUTH_LIMIT_PER_ADDRESS,
    perClient: c.OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT,
    windowSecs: c.OAUTH_DEVICE_AUTH_WINDOW_SECS,
  };
  const who = { addressBucket: addressBucket(address), clientId: client.clientId };
  const deviceCode = randomToken(32);
  // A user code is unique among stored ones: on the (rare) collision, draw again (the transaction, and the
  // windows it took from, rolled back with it).
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    const now = ctx.now();
    try {
      await ctx.db.em().transactional(async (em) => {
        await takeDeviceAuthorization(emSql(em), who, limits, now);
        await insertDeviceCode(em, {
          deviceCodeHash: sha256Hex(deviceCode),
          userCodeHash: sha256Hex(userCode),
          clientId: client.clientId,
          consentType: scope,
          audience,
          spendingLimitCents: req.spending_limit_cents ?? DEFAULT_CONSENT_CENTS,
          currency: req.currency,
          durationSecs: req.duration_secs ?? DEFAULT_CONSENT_DURATION_SECS,
          intervalSecs: c.OAUTH_DEVICE_POLL_INTERVAL_SECS,
          expiresAt: new Date(now.getTime() + DEVICE_CODE_TTL_SECS * 1000),
          createdAt: now,
        });
      });
    } catch (err) {
      if (err instanceof DeviceRateLimited) {
        throw temporarilyUnavailable(
          `too many device authorizations from this ${err.bucket}: try again in ${err.retryAfterSecs} seconds`,
          429,
          err.retryAfterSecs,
        );
      }
      if (!isUniqueViolation(err) || attempt >= 4) throw err;
      continue;
    }
    const shown = displayUserCode(userCode);
    const page = `${c.webAppUrl}/device`;
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: page,
      verification_uri_complete: `${page}?user_code=${encodeURIComponent(shown)}`,
      expires_in: DEVICE_CODE_TTL_SECS,
      interval: c.OAUTH_DEVICE_POLL_INTERVAL_SECS,
    };
  }
}

/** The request body, as the API description shows it. */
export { Body as DeviceAuthorizationBody };
