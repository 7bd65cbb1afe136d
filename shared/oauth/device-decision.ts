// The human's side of the device flow, with their API key (the device page calls the same functions): look up
// a user code to see what the device asks for, then approve (optionally lowering the cap or shortening the
// duration) or deny. Every lookup
// counts as a guess (guess-limit.ts). Approval creates the grant and its delegation and marks the request
// approved in ONE transaction, by a conditional UPDATE (still pending, not expired): a code decides once.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import type { CONSENT_TYPES } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { CURRENCIES } from '../spend/currency.js';
import { line } from '../text.js';
import { publisherOf } from './client-metadata-document.js';
import { enabledClient } from './clients.js';
import {
  ConsentCents,
  ConsentDuration,
  ConsentWallet,
  MIN_DURATION_SECS,
  consentFunding,
  newGrant,
} from './consent.js';
import { asGuess } from './guess-limit.js';
import { type DeviceCodeRow, decidePendingDeviceCode, findPendingByUserCode } from './store/device-codes.js';
import { normalizeUserCode } from './user-code.js';

export const DeviceDetailsBody = z.object({ user_code: line(64) });
export const DeviceDecisionBody = ConsentWallet.extend({
  user_code: line(64),
  approve: z.boolean(),
  spending_limit_cents: ConsentCents.optional(),
  duration_secs: ConsentDuration.optional(),
});

const invalidCode = () => new AppError('BCK.OAUTH.0020');

/** The pending, unexpired request a user code names, looked up as one guess of `userId`. */
async function pendingRequest(ctx: ServiceContext, userId: string, typed: string): Promise<DeviceCodeRow> {
  const row = await asGuess(ctx, userId, async () => {
    const normal = normalizeUserCode(typed);
    if (normal === undefined) return undefined;
    const found = await findPendingByUserCode(ctx.db.em(), sha256Hex(normal), ctx.now());
    return found ?? undefined;
  });
  if (row === undefined) throw invalidCode();
  return row;
}

export interface DeviceDetails {
  readonly connectorName: string;
  readonly verified: boolean;
  /** The host publishing the client's metadata document, when the client is named by one (the page shows it). */
  readonly publisher?: string | undefined;
  readonly consentType: (typeof CONSENT_TYPES)[number];
  readonly spendingLimitCents: string;
  readonly currency: (typeof CURRENCIES)[number];
  readonly durationSecs: number;
}

const currencyOf = (stored: string) => z.enum(CURRENCIES).parse(stored);

export async function deviceDetails(ctx: ServiceContext, userId: string, typed: string): Promise<DeviceDetails> {
  const row = await pendingRequest(ctx, userId, typed);
  const client = await enabledClient(ctx, row.clientId);
  return {
    connectorName: client.name,
    verified: client.verified,
    publisher: publisherOf(client.clientId),
    consentType: row.consentType,
    spendingLimitCents: toWire(row.spendingLimitCents),
    currency: currencyOf(row.currency),
    durationSecs: row.durationSecs,
  };
}

export async function decideDevice(
  ctx: ServiceContext,
  userId: string,
  decision: z.output<typeof DeviceDecisionBody>,
): Promise<void> {
  const row = await pendingRequest(ctx, userId, decision.user_code);
  await enabledClient(ctx, row.clientId);
  const limit = decision.spending_limit_cents ?? row.spendingLimitCents;
  if (limit > row.spendingLimitCents) {
    throw new AppError('BCK.HTTP.0400', {
      details: 'spending_limit_cents may lower the cap the device asked for, not raise it',
      params: {
        requested: toWire(row.spendingLimitCents),
      },
    });
  }
  const secs = decision.duration_secs ?? row.durationSecs;
  // The body's schema bounds its own field; the device page's form sends any number, so both bounds are here.
  if (secs > row.durationSecs || secs < MIN_DURATION_SECS) {
    throw new AppError('BCK.HTTP.0400', {
      details: `duration_secs may shorten the duration the device asked for, not lengthen it: from ${MIN_DURATION_SECS} to ${row.durationSecs}`,
      params: { requested: row.durationSecs },
    });
  }
  const funding = decision.approve ? await consentFunding(ctx, userId, row.consentType, decision) : undefined;
  const now = ctx.now();
  const decided = await ctx.db.em().transactional(async (em) => {
    if (!decision.approve) return decidePendingDeviceCode(em, row.deviceCodeHash, now, { status: 'denied', userId });
    const grant = await newGrant(
      em,
      { userId, clientId: row.clientId },
      {
        consentType: row.consentType,
        spendingLimitCents: limit,
        currency: currencyOf(row.currency),
        durationSecs: secs,
      },
      now,
      funding,
    );
    await em.flush();
    const n = await decidePendingDeviceCode(em, row.deviceCodeHash, now, {
      status: 'approved',
      userId,
      grantId: grant.grantId,
    });
    // Decided by someone else meanwhile: throwing rolls the new grant and delegation back.
    if (n !== 1) throw invalidCode();
    return n;
  });
  if (decided !== 1) throw invalidCode();
}
