// The MPP `evm` method, `charge` intent, `authorization` credential type: an EIP-3009 transferWithAuthorization
// (mppx 0.11 evm/Types.ts, evm/client/Charge.ts, evm/server/Charge.ts — what merchants run).
//
// What the server checks, and therefore what we sign:
// - to = request.recipient, value = request.amount (compared as strings: we send the canonical decimal);
// - nonce = keccak256(utf8(challenge.id + challenge.realm)) — not random: it binds the signature to the challenge;
// - validAfter = 0; validBefore = the challenge's `expires` in Unix seconds (mppx client: now + 300 without one);
// - the EIP-712 domain is the token's own name/version, which the challenge does not carry (we keep the table,
//   shared/assets.ts); source = `did:pkh:eip155:<chainId>:<checksummed payer>`.
// Splits cannot be paid (one authorization pays one recipient); `tempo` and other methods are not EIP-3009.
import { type Address, type Hex, getAddress, keccak256, stringToBytes } from 'viem';
import { z } from 'zod';
import type { Config } from '../../../config/index.js';
import { type Asset, NETWORKS, type Network } from '../../assets.js';
import { MAX_INT64 } from '../../money.js';
import type { TransferAuthorization } from '../eip3009.js';
import { payeeRefusal } from '../payee.js';
import { ChoiceReason, type NoChoice, type Rejection, clip, noChoice } from '../reasons.js';
import { recipientAllowed } from '../x402-offers.js';
import { HexAddress, UintString } from '../x402-schemas.js';
import type { PaymentChallenge } from './challenge.js';
import { serialize as serializeCredential } from './credential.js';

type Environment = Config['ENVIRONMENT'];

export const METHOD = 'evm';
export const INTENT = 'charge';
export const CREDENTIAL_TYPE = 'authorization';
/** mppx client: validBefore when the challenge has no `expires`. */
export const DEFAULT_VALIDITY_SECONDS = 300;
/** A challenge expiring sooner than this cannot be paid in time (the merchant checks validBefore > now). */
export const MIN_REMAINING_SECONDS = 5;

/** Canonical EVM charge request (mppx evm/Types.ts `ChargeRequestSchema`), loose: unknown fields are kept. */
export const EvmChargeRequest = z.looseObject({
  amount: UintString,
  currency: HexAddress,
  recipient: HexAddress,
  description: z.string().max(4096).optional(),
  externalId: z.string().max(512).optional(),
  methodDetails: z.looseObject({
    chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    credentialTypes: z.array(z.string().max(64)).max(16).optional(),
    decimals: z.number().int().min(0).max(77).optional(),
    permit2Address: HexAddress.optional(),
    splits: z
      .array(z.looseObject({ amount: UintString, recipient: HexAddress }))
      .max(64)
      .optional(),
  }),
});
export type EvmChargeRequest = z.infer<typeof EvmChargeRequest>;

export interface MppChooseOptions {
  readonly environment: Environment;
  /** ROUTER_MPP_ASSETS for the environment's chain; default: the built-in USDC/EURC table. */
  readonly assets?: readonly Asset[] | undefined;
  /** ROUTER_FUNDED_NETWORKS (CAIP-2 or v1 names); undefined means the environment's network. */
  readonly fundedNetworks?: readonly string[] | undefined;
  /** The delegation's allowedRecipients; undefined means any. */
  readonly allowedRecipients?: readonly string[] | undefined;
  /** The wallet that pays: a challenge paying it is refused (payee.ts); the zero address is refused regardless. */
  readonly payer?: string | undefined;
  /** When an organization wallet pays: the spending member's own wallet, refused as a payee too (payee.ts). */
  readonly spender?: string | undefined;
  readonly nowMs?: number | undefined;
  /**
   * Why the field a challenge's `header` parameter names cannot carry the credential, or undefined when it can
   * (the outbound module's policy, upstream/headers.ts `credentialHeaderRefusal`). Absent: any field-name token
   * (the Challenge parser already refused the rest).
   */
  readonly credentialHeaderRefusal?: ((name: string) => string | undefined) | undefined;
}

export interface MppChoice {
  readonly type: 'chosen';
  /** Position among the Payment challenges. */
  readonly index: number;
  readonly challenge: PaymentChallenge;
  readonly request: EvmChargeRequest;
  readonly network: Network;
  readonly asset: Asset;
  readonly amount: bigint;
  readonly recipient: Address;
  readonly chainId: number;
}

type Judged = { ok: true; choice: MppChoice } | { ok: false; rejection: Rejection };

function judge(index: number, challenge: PaymentChallenge, o: MppChooseOptions): Judged {
  const reject = (reason: ChoiceReason, detail: string): Judged => ({
    ok: false,
    rejection: { index, reason, detail },
  });
  if (challenge.method !== METHOD) return reject(ChoiceReason.unsupportedMethod, `method ${clip(challenge.method)}`);
  if (challenge.intent !== INTENT) return reject(ChoiceReason.unsupportedIntent, `intent ${clip(challenge.intent)}`);
  const parsed = EvmChargeRequest.safeParse(challenge.requestJson);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return reject(
      ChoiceReason.malformedOption,
      first === undefined ? 'request' : `request.${first.path.map(String).join('.')}: ${first.message}`,
    );
  }
  const request = parsed.data;
  const network = NETWORKS[o.environment];
  const chainId = request.methodDetails.chainId;
  const funded =
    chainId === network.chainId &&
    (o.fundedNetworks === undefined || o.fundedNetworks.some((n) => n === network.caip2 || n === network.name));
  if (!funded) return reject(ChoiceReason.networkNotFunded, `chainId ${chainId}`);
  const allowlist = o.assets ?? network.assets;
  const asset = allowlist.find((a) => a.address.toLowerCase() === request.currency.toLowerCase());
  if (asset === undefined)
    return reject(ChoiceReason.currencyNotAllowed, `currency ${request.currency} on eip155:${chainId}`);
  if (!(request.methodDetails.credentialTypes ?? []).includes(CREDENTIAL_TYPE)) {
    return reject(
      ChoiceReason.unsupportedCredentialType,
      `credentialTypes ${clip(request.methodDetails.credentialTypes ?? [])}`,
    );
  }
  // Refused here, while choosing, never after the payment: a credential that cannot be sent is money lost.
  const refusedHeader = challenge.header === undefined ? undefined : o.credentialHeaderRefusal?.(challenge.header);
  if (refusedHeader !== undefined)
    return reject(ChoiceReason.unsupportedCredentialHeader, `header ${clip(challenge.header)}: ${refusedHeader}`);
  if ((request.methodDetails.splits ?? []).length > 0)
    return reject(ChoiceReason.splitsNotSupported, `${request.methodDetails.splits?.length} splits`);
  if (challenge.expires !== undefined) {
    const now = o.nowMs ?? Date.now();
    if (Date.parse(challenge.expires) - now < MIN_REMAINING_SECONDS * 1000)
      return reject(ChoiceReason.challengeExpired, `expires ${challenge.expires}`);
  }
  const amount = BigInt(request.amount);
  if (amount <= 0n || amount > MAX_INT64)
    return reject(ChoiceReason.amountOutOfRange, `amount ${clip(request.amount)}`);
  const payee = payeeRefusal(request.recipient, o.payer, o.spender);
  if (payee !== undefined) return reject(payee.reason, payee.detail);
  if (!recipientAllowed(request.recipient, o.allowedRecipients))
    return reject(ChoiceReason.recipientNotAllowed, `recipient ${request.recipient}`);
  return {
    ok: true,
    choice: {
      type: 'chosen',
      index,
      challenge,
      request,
      network,
      asset,
      amount,
      recipient: getAddress(request.recipient),
      chainId,
    },
  };
}

/**
 * Picks the challenge to pay: method `evm`, intent `charge`, credential type `authorization`, no splits, a chain
 * this environment funds, a currency on the allowlist, not expired, a recipient that is neither the zero address
 * nor the payer and that the delegation allows. Prefers USDC, then the merchant's order.
 */
export function chooseMppChallenge(challenges: readonly PaymentChallenge[], o: MppChooseOptions): MppChoice | NoChoice {
  const rejected: Rejection[] = [];
  let best: MppChoice | undefined;
  challenges.forEach((c, i) => {
    const j = judge(i, c, o);
    if (!j.ok) rejected.push(j.rejection);
    else if (best === undefined || (best.asset.symbol !== 'USDC' && j.choice.asset.symbol === 'USDC')) best = j.choice;
  });
  return best ?? noChoice(rejected, 'MPP challenge');
}

/** The EIP-3009 nonce of a challenge: keccak256(utf8(id + realm)) (mppx evm/Types.ts `challengeHash`). */
export const challengeNonce = (challenge: Pick<PaymentChallenge, 'id' | 'realm'>): Hex =>
  keccak256(stringToBytes(`${challenge.id}${challenge.realm}`));

/** The authorization to sign for a chosen challenge (mppx evm client `createCredential`). */
export function mppAuthorization(input: {
  readonly choice: MppChoice;
  readonly from: string;
  readonly nowSeconds?: number;
}): TransferAuthorization {
  const { challenge } = input.choice;
  const validBefore =
    challenge.expires !== undefined
      ? Math.floor(Date.parse(challenge.expires) / 1000)
      : (input.nowSeconds ?? Math.floor(Date.now() / 1000)) + DEFAULT_VALIDITY_SECONDS;
  return {
    from: getAddress(input.from),
    to: input.choice.recipient,
    value: input.choice.amount,
    validAfter: 0n,
    validBefore: BigInt(validBefore),
    nonce: challengeNonce(challenge),
  };
}

/** `did:pkh:eip155:<chainId>:<checksummed address>` (mppx `Types.toSource`). */
export const sourceOf = (chainId: number, address: string): string =>
  `did:pkh:eip155:${chainId}:${getAddress(address)}`;

export interface MppCredential {
  /** `Authorization`, or the field the challenge's `header` parameter names. */
  readonly name: string;
  /** `Payment <base64url JSON>`. */
  readonly value: string;
}

/**
 * The credential for a signed authorization. Payload fields in mppx's order (its zod schema's): from, nonce,
 * signature, to, type, validAfter, validBefore, value.
 */
export function buildMppCredential(input: {
  readonly challenge: PaymentChallenge;
  readonly chainId: number;
  readonly authorization: TransferAuthorization;
  readonly signature: Hex;
}): MppCredential {
  const a = input.authorization;
  const payload = {
    from: getAddress(a.from),
    nonce: a.nonce,
    signature: input.signature,
    to: getAddress(a.to),
    type: CREDENTIAL_TYPE,
    validAfter: a.validAfter.toString(),
    validBefore: a.validBefore.toString(),
    value: a.value.toString(),
  };
  return {
    name: input.challenge.header ?? 'Authorization',
    value: serializeCredential({ challenge: input.challenge, payload, source: sourceOf(input.chainId, a.from) }),
  };
}
