// The device authorization request (RFC 8628 §3.1-3.2): a connector without a browser (a CLI, an agent on a
// server) asks for consent; the human approves it on the device page with the user code. Both codes are stored
// hashed. The terms are what the connector asks for: the human may lower the cap, never raise it.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import { CONSENT_TYPES, OAuthDeviceCode } from '../db/entities/index.js';
import { isUniqueViolation } from '../db/sql.js';
import { line } from '../text.js';
import { ConsentCents, ConsentCurrency, ConsentDuration } from './consent.js';
import { invalidScope } from './protocol-error.js';
import { parseTokenRequest, tokenClient } from './token-request.js';
import { displayUserCode, newUserCode } from './user-code.js';

/** RFC 8628 §3.2: how long the codes live (the polling interval is OAUTH_DEVICE_POLL_INTERVAL_SECS). */
export const DEVICE_CODE_TTL_SECS = 600;
/** What a connector gets when it names no terms: $10 for a day, which the human sees before approving. */
export const DEFAULT_DEVICE_CENTS = 1000n;
export const DEFAULT_DEVICE_DURATION_SECS = 86_400;

const Body = z.object({
  client_id: line(200).min(1),
  scope: line(200),
  spending_limit_cents: ConsentCents.optional(),
  currency: ConsentCurrency.default('usd'),
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

export async function startDeviceAuthorization(
  ctx: ServiceContext,
  body: unknown,
): Promise<DeviceAuthorizationResponse> {
  const req = parseTokenRequest(Body, body);
  const client = await tokenClient(ctx, req.client_id);
  const scope = CONSENT_TYPES.find((t) => t === req.scope);
  if (scope === undefined) throw invalidScope(`scope must be one of ${CONSENT_TYPES.join(', ')}`);
  if (!client.allowedConsentTypes.includes(scope)) throw invalidScope(`this client may not ask for ${scope} consent`);
  if (scope === 'account_access' && !(client.verified && client.accountLevel)) {
    throw invalidScope('account_access needs a verified, account-level client');
  }
  const now = ctx.now();
  const deviceCode = randomToken(32);
  // A user code is unique among stored ones: on the (rare) collision, draw again.
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    try {
      const em = ctx.db.em();
      em.create(OAuthDeviceCode, {
        deviceCodeHash: sha256Hex(deviceCode),
        userCodeHash: sha256Hex(userCode),
        clientId: client.clientId,
        consentType: scope,
        spendingLimitCents: req.spending_limit_cents ?? DEFAULT_DEVICE_CENTS,
        currency: req.currency,
        durationSecs: req.duration_secs ?? DEFAULT_DEVICE_DURATION_SECS,
        status: 'pending',
        userId: null,
        grantId: null,
        intervalSecs: ctx.config.OAUTH_DEVICE_POLL_INTERVAL_SECS,
        lastPolledAt: null,
        expiresAt: new Date(now.getTime() + DEVICE_CODE_TTL_SECS * 1000),
        createdAt: now,
      });
      await em.flush();
      const shown = displayUserCode(userCode);
      const page = `${ctx.config.webAppUrl}/device`;
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: page,
        verification_uri_complete: `${page}?user_code=${encodeURIComponent(shown)}`,
        expires_in: DEVICE_CODE_TTL_SECS,
        interval: ctx.config.OAUTH_DEVICE_POLL_INTERVAL_SECS,
      };
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= 4) throw err;
    }
  }
}

/** The request body, as the API description shows it. */
export { Body as DeviceAuthorizationBody };
