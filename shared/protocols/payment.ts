// Detect, choose and pay a merchant's 402 in one place (router flow step 5, docs/architecture.md), framework
// free: the router hands over header access and the body text, and gets back either what to pay or why nothing
// can be paid, then the credential header to re-send with and the settlement facts for the payment record.
//
// Detection: `PAYMENT-REQUIRED` header -> x402 v2; JSON body with `accepts` -> x402 v1; `WWW-Authenticate:
// Payment` -> MPP. A merchant may offer x402 and MPP at once (every mppx evm charge route does): x402 is paid when
// one of its options is fundable, else MPP — never both, since each credential would move money on its own.
import { type Hex, bytesToHex } from 'viem';
import type { Asset } from '../assets.js';
import { type TypedStruct, signTypedNow } from './digest-signer.js';
import { type TransferAuthorization, authorizationTyped, keyBytes } from './eip3009.js';
import * as Challenge from './mpp/challenge.js';
import { type MppChoice, buildMppCredential, chooseMppChallenge, mppAuthorization } from './mpp/evm-charge.js';
import { ChoiceReason, type NoChoice, type Rejection, noChoice } from './reasons.js';
import { type X402ChooseOptions, type X402Choice, chooseX402Option } from './x402-offers.js';
import {
  X402Headers,
  decodePaymentRequiredV1,
  decodePaymentRequiredV2,
  decodePaymentRequiredV2Value,
} from './x402-decode.js';
import { buildX402Payment, x402Authorization } from './x402-authorization.js';
import { mppxRouteBinding } from './x402-mppx-binding.js';
import type { Extensions, ResourceInfo } from './x402-schemas.js';

export interface UpstreamAnswer {
  /** A response header by name (case-insensitive, as node:http / undici give them); undefined when absent. */
  readonly header: (name: string) => string | undefined;
  /** The 402 body as text, when read (x402 v1 puts its requirements there). */
  readonly body?: string | undefined;
  /**
   * The x402 v2 PaymentRequired object already parsed from JSON (mode A receives it in the request body): used
   * instead of the `PAYMENT-REQUIRED` header, which saves a base64 and JSON round trip. Still untrusted input.
   */
  readonly paymentRequired?: unknown;
}

export interface PaymentChooseOptions extends X402ChooseOptions {
  /** ROUTER_MPP_ASSETS for the environment's chain; default: the built-in table. */
  readonly mppAssets?: readonly Asset[] | undefined;
  readonly nowMs?: number | undefined;
  /** MPP: the policy for a challenge's `header` parameter (see MppChooseOptions). */
  readonly credentialHeaderRefusal?: ((name: string) => string | undefined) | undefined;
}

export type PaymentChoice =
  | {
      readonly type: 'x402';
      readonly version: 1 | 2;
      readonly choice: X402Choice;
      /** v2: the 402's `resource` and `extensions`, echoed in the credential. */
      readonly resource?: ResourceInfo | undefined;
      readonly extensions?: Extensions | undefined;
    }
  | { readonly type: 'mpp'; readonly choice: MppChoice };

/** What the 402 offered under one protocol: a choice, or why none. */
type Attempt = PaymentChoice | NoChoice | undefined;

function x402Attempt(answer: UpstreamAnswer, o: PaymentChooseOptions): Attempt {
  const header = answer.paymentRequired === undefined ? answer.header(X402Headers.paymentRequired) : undefined;
  if (answer.paymentRequired !== undefined || header !== undefined) {
    const pr =
      header === undefined ? decodePaymentRequiredV2Value(answer.paymentRequired) : decodePaymentRequiredV2(header);
    if (pr.type === 'invalid') return malformedOffer(pr.reason);
    const choice = chooseX402Option(pr.value.accepts, { ...o, version: 2 });
    if (choice.type === 'none') return choice;
    return { type: 'x402', version: 2, choice, resource: pr.value.resource, extensions: pr.value.extensions };
  }
  const body = answer.body;
  // A body is x402 v1 only if it is JSON naming `accepts`; anything else is just a body.
  if (body === undefined || !body.includes('"accepts"')) return undefined;
  const pr = decodePaymentRequiredV1(body);
  if (pr.type === 'invalid') return malformedOffer(pr.reason);
  const choice = chooseX402Option(pr.value.accepts, { ...o, version: 1 });
  return choice.type === 'none' ? choice : { type: 'x402', version: 1, choice };
}

function mppAttempt(answer: UpstreamAnswer, o: PaymentChooseOptions): Attempt {
  const header = answer.header('WWW-Authenticate');
  if (header === undefined || !/payment/i.test(header)) return undefined;
  const parsed = Challenge.deserializeList(header);
  if (parsed.type === 'invalid')
    return /(^|[\s,])payment([\s,]|$)/i.test(header) ? malformedOffer(parsed.reason) : undefined;
  const choice = chooseMppChallenge(parsed.value.challenges, {
    environment: o.environment,
    assets: o.mppAssets,
    fundedNetworks: o.fundedNetworks,
    allowedRecipients: o.allowedRecipients,
    payer: o.payer,
    spender: o.spender,
    nowMs: o.nowMs,
    credentialHeaderRefusal: o.credentialHeaderRefusal,
  });
  return choice.type === 'none' ? choice : { type: 'mpp', choice };
}

/** The refusal of an offer that does not decode (the same whether the 402 came from a merchant or a mode A body). */
export function malformedOffer(detail: string): NoChoice {
  return noChoice([{ index: 0, reason: ChoiceReason.malformedOption, detail }], 'payment offer');
}

/**
 * Chooses what to pay for a merchant's 402. `none` names why nothing is fundable (the furthest-reaching refusal
 * across x402 and MPP) with BCK.ROUTER.0001, or BCK.ROUTER.0012 for an EIP-712 domain other than ours.
 */
export function choosePayment(answer: UpstreamAnswer, o: PaymentChooseOptions): PaymentChoice | NoChoice {
  const x402 = x402Attempt(answer, o);
  if (x402 !== undefined && x402.type !== 'none') return x402;
  const mpp = mppAttempt(answer, o);
  if (mpp !== undefined && mpp.type !== 'none') return mpp;
  const tag = (protocol: string, list: readonly Rejection[] | undefined): Rejection[] =>
    (list ?? []).map((r) => ({ ...r, detail: `${protocol}: ${r.detail}` }));
  const rejected: Rejection[] = [...tag('x402', x402?.rejected), ...tag('mpp', mpp?.rejected)];
  if (rejected.length === 0) {
    return {
      type: 'none',
      reason: ChoiceReason.noOptions,
      code: 'BCK.ROUTER.0001',
      message: 'the 402 carries no x402 or MPP payment requirements',
      rejected,
    };
  }
  const what =
    x402 !== undefined && mpp !== undefined
      ? 'x402 option or MPP challenge'
      : x402 !== undefined
        ? 'x402 option'
        : 'MPP challenge';
  return noChoice(rejected, what);
}

/**
 * A chosen option once signed: the header that carries it to the merchant and the facts the payment record keeps
 * (what was authorized, to whom, on which network).
 */
export interface SignedPayment {
  readonly protocol: 'x402' | 'mpp';
  readonly x402Version: 1 | 2 | undefined;
  /** Header to attach: `PAYMENT-SIGNATURE`, `X-PAYMENT`, or `Authorization` (or the MPP challenge's `header`). */
  readonly header: { readonly name: string; readonly value: string };
  readonly settlement: {
    readonly recipient: string;
    /** Atomic units of `asset`: exactly what was signed. */
    readonly amount: bigint;
    /** As offered: x402 v1 `base-sepolia`, v2 `eip155:84532`; MPP `eip155:<chainId>`. */
    readonly network: string;
    readonly asset: Asset;
    readonly scheme: 'exact' | 'charge';
  };
  readonly authorization: TransferAuthorization;
  readonly signature: Hex;
}

export interface Signer {
  readonly address: string;
  readonly privateKey: Hex | Uint8Array;
}

/** A chosen option with its authorization filled in: the digest to sign, and the signed payment once signed. */
export interface UnsignedPayment {
  readonly authorization: TransferAuthorization;
  /** The authorization as EIP-712 hashes it (EIP-3009 TransferWithAuthorization), for the signer. */
  readonly typed: TypedStruct;
  finish(signature: Hex): SignedPayment;
}

/** Fills in the authorization for the chosen option, paid from `from`; signing is the caller's next step. */
export function preparePayment(
  payment: PaymentChoice,
  from: string,
  opts: { nowSeconds?: number | undefined; maxAuthTtlSeconds?: number } = {},
): UnsignedPayment {
  const now = opts.nowSeconds === undefined ? {} : { nowSeconds: opts.nowSeconds };
  if (payment.type === 'x402') {
    const { choice, version } = payment;
    const cap = opts.maxAuthTtlSeconds === undefined ? {} : { maxValiditySeconds: opts.maxAuthTtlSeconds };
    // An mppx merchant's v2 offer is bound to its route (x402-mppx-binding.ts): its nonce, resource, extensions.
    const binding = version === 2 ? mppxRouteBinding(choice.option, payment.resource, payment.extensions) : undefined;
    const authorization = x402Authorization({
      version,
      choice,
      from,
      ...now,
      ...cap,
      ...(binding === undefined ? {} : { nonce: binding.nonce }),
    });
    const resource = binding?.resource ?? (version === 2 ? payment.resource : undefined);
    const extensions = binding?.extensions ?? (version === 2 ? payment.extensions : undefined);
    return {
      authorization,
      typed: authorizationTyped(authorization, choice.asset, choice.network.chainId),
      finish: (signature) => ({
        protocol: 'x402',
        x402Version: version,
        header:
          version === 1
            ? buildX402Payment({ version: 1, option: choice.option, authorization, signature })
            : buildX402Payment({ version: 2, option: choice.option, resource, extensions, authorization, signature }),
        settlement: {
          recipient: choice.payTo,
          amount: choice.amount,
          network: String(choice.option.network),
          asset: choice.asset,
          scheme: 'exact',
        },
        authorization,
        signature,
      }),
    };
  }
  const { choice } = payment;
  const authorization = mppAuthorization({ choice, from, ...now });
  return {
    authorization,
    typed: authorizationTyped(authorization, choice.asset, choice.chainId),
    finish: (signature) => ({
      protocol: 'mpp',
      x402Version: undefined,
      header: buildMppCredential({
        challenge: choice.challenge,
        chainId: choice.chainId,
        authorization,
        signature,
      }),
      settlement: {
        recipient: choice.recipient,
        amount: choice.amount,
        network: `eip155:${choice.chainId}`,
        asset: choice.asset,
        scheme: 'charge',
      },
      authorization,
      signature,
    }),
  };
}

/** Signs the chosen option with the buyer's key (native signer, on this thread) and builds its header. */
export function signPayment(payment: PaymentChoice, signer: Signer, nowSeconds?: number): SignedPayment {
  const unsigned = preparePayment(payment, signer.address, { nowSeconds });
  return unsigned.finish(bytesToHex(signTypedNow(unsigned.typed, keyBytes(signer.privateKey))));
}
