// grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4-3.5): the device polls until the human
// decides. `slow_down` is enforced, not advisory: a poll within the interval of the previous one is refused and
// adds 5 seconds to the interval for this and every later poll. Each poll records itself by a compare-and-set
// UPDATE of the poll time read, so two polls at once cannot both pass. An approved request is redeemed once, by
// a conditional UPDATE of its status; a redemption after that is a replay and revokes the grant, as for codes.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { line } from '../text.js';
import { liveGrant, revokeGrant } from './grants.js';
import { accessDenied, authorizationPending, expiredToken, invalidGrant, slowDown } from './protocol-error.js';
import { findDeviceCode, recordDevicePoll, redeemApprovedDeviceCode } from './store/device-codes.js';
import { tokenAudience } from './resource.js';
import { clientRequest } from './token-request.js';
import { type TokenResponse, redeem } from './tokens.js';

const Body = z.object({ client_id: line(200).min(1), device_code: line(200).min(1) });

/** RFC 8628 §3.5: the increase of the interval on each slow_down. */
const SLOW_DOWN_STEP_SECS = 5;

export async function redeemDeviceCode(
  ctx: ServiceContext,
  signer: TokenSigner,
  body: unknown,
): Promise<TokenResponse> {
  const req = await clientRequest(ctx, Body, body);
  const now = ctx.now();
  const deviceCodeHash = sha256Hex(req.device_code);
  const em = ctx.db.em();
  const row = await findDeviceCode(em, deviceCodeHash);
  if (row === null || row.clientId !== req.client_id) throw invalidGrant('the device code is invalid');
  if (row.expiresAt.getTime() <= now.getTime() && row.status !== 'redeemed') throw expiredToken();
  const audience = tokenAudience(ctx.config, body, row.audience);

  const last = row.lastPolledAt ?? null;
  const tooSoon = last !== null && now.getTime() - last.getTime() < row.intervalSecs * 1000;
  const polled = await recordDevicePoll(
    em,
    deviceCodeHash,
    { lastPolledAt: last, intervalSecs: row.intervalSecs },
    tooSoon ? { lastPolledAt: now, intervalSecs: row.intervalSecs + SLOW_DOWN_STEP_SECS } : { lastPolledAt: now },
  );
  if (tooSoon) throw slowDown(row.intervalSecs + SLOW_DOWN_STEP_SECS);
  // Another poll recorded itself between the read and the update: this one came within the interval.
  if (polled !== 1) throw slowDown(row.intervalSecs);

  switch (row.status) {
    case 'pending':
      throw authorizationPending();
    case 'denied':
      throw accessDenied();
    case 'redeemed':
      if (row.grantId != null) await revokeGrant(ctx, row.grantId, 'device_replay');
      throw invalidGrant('the device code has already been used');
    case 'approved':
      break;
  }
  const grant = row.grantId == null ? null : await liveGrant(em, row.grantId, now);
  if (grant === null) throw invalidGrant('the grant has been revoked or has expired');
  const tokens = await redeem(ctx, signer, grant, audience, (tx) => redeemApprovedDeviceCode(tx, deviceCodeHash));
  if (tokens === undefined) {
    await revokeGrant(ctx, grant.id, 'device_replay');
    throw invalidGrant('the device code has already been used');
  }
  return tokens;
}

/** The request body, as the API description shows it. */
export { Body as DeviceCodeBody };
