// x402 offers: judging a decoded 402's options and choosing the one to fund (router flow step 5,
// docs/architecture.md).
import { type Address, getAddress } from 'viem';
import type { Config } from '../../config/index.js';
import { type Asset, NETWORKS, type Network } from '../assets.js';
import { MAX_INT64 } from '../money.js';
import { isJsonObject } from './encoding.js';
import { payeeRefusal } from './payee.js';
import { ChoiceReason, type NoChoice, type Rejection, clip, noChoice } from './reasons.js';
import { issue } from './x402-decode.js';
import { ExactEvmOption, MAX_ACCEPTS, type OfferedOption } from './x402-schemas.js';

type Environment = Config['ENVIRONMENT'];

export interface X402ChooseOptions {
  readonly environment: Environment;
  /**
   * ROUTER_FUNDED_NETWORKS: narrows the environment's networks (CAIP-2 `eip155:84532` or v1 name `base-sepolia`).
   * Undefined means every network of the environment.
   */
  readonly fundedNetworks?: readonly string[] | undefined;
  /** The delegation's allowedRecipients; undefined means any recipient. */
  readonly allowedRecipients?: readonly string[] | undefined;
  /** The wallet that pays: an option paying it is refused (payee.ts); the zero address is refused regardless. */
  readonly payer?: string | undefined;
  /** When an organization wallet pays: the spending member's own wallet, refused as a payee too (payee.ts). */
  readonly spender?: string | undefined;
  /**
   * The x402 version the offer came as: its options must use that version's fields (v1: a network name such as
   * `base-sepolia` and `maxAmountRequired`; v2: CAIP-2 `eip155:<id>` and `amount`). Undefined: either.
   */
  readonly version?: 1 | 2 | undefined;
}

export interface X402Choice {
  readonly type: 'chosen';
  /** Position in `accepts`. */
  readonly index: number;
  /** `accepts[index]` exactly as offered: v2 echoes it as `accepted`. */
  readonly option: OfferedOption;
  readonly network: Network;
  readonly asset: Asset;
  /** The exact amount to sign: v1 `maxAmountRequired`, v2 `amount`. */
  readonly amount: bigint;
  readonly payTo: Address;
  readonly maxTimeoutSeconds: number | undefined;
}

/** Our network entry for an x402 network name in this environment (CAIP-2 or v1 name), if it is funded. */
export function fundedNetwork(
  network: string,
  o: Pick<X402ChooseOptions, 'environment' | 'fundedNetworks'>,
): Network | undefined {
  const ours = NETWORKS[o.environment];
  const names: readonly string[] = [ours.caip2, ours.name];
  if (!names.includes(network)) return undefined;
  if (o.fundedNetworks !== undefined && !o.fundedNetworks.some((n) => names.includes(n))) return undefined;
  return ours;
}

export function recipientAllowed(payTo: string, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined) return true;
  const p = payTo.toLowerCase();
  return allowed.some((a) => a.toLowerCase() === p);
}

type Judged = { ok: true; choice: X402Choice } | { ok: false; rejection: Rejection };

function judge(index: number, raw: unknown, o: X402ChooseOptions): Judged {
  const reject = (reason: ChoiceReason, detail: string): Judged => ({
    ok: false,
    rejection: { index, reason, detail },
  });
  if (!isJsonObject(raw)) return reject(ChoiceReason.malformedOption, 'not an object');
  if (raw.scheme !== 'exact') return reject(ChoiceReason.unsupportedScheme, `scheme ${clip(raw.scheme)}`);
  if (typeof raw.network !== 'string') return reject(ChoiceReason.malformedOption, 'network: must be a string');
  const network = fundedNetwork(raw.network, o);
  if (network === undefined) return reject(ChoiceReason.networkNotFunded, `network ${clip(raw.network)}`);
  // The credential is built for the declared version, and a merchant of the other version cannot read it (x402-express
  // 1.x parses only X-PAYMENT with v1 names, @x402 v2 only PAYMENT-SIGNATURE; @x402/evm refuses a non-CAIP-2
  // network): an option in the other version's fields is refused before anything is signed or charged.
  if (o.version === 2 && (raw.network !== network.caip2 || raw.amount === undefined)) {
    return reject(
      ChoiceReason.malformedOption,
      'an x402 v2 option names its network in CAIP-2 (eip155:<id>) and its price in amount',
    );
  }
  if (o.version === 1 && (raw.network !== network.name || raw.maxAmountRequired === undefined)) {
    return reject(
      ChoiceReason.malformedOption,
      `an x402 v1 option names its network (${network.name}) and its price in maxAmountRequired`,
    );
  }

  const parsed = ExactEvmOption.safeParse(raw);
  if (!parsed.success) return reject(ChoiceReason.malformedOption, issue(parsed.error));
  const opt = parsed.data;
  // We sign EIP-3009 only; an option that asks for Permit2 expects a different payload.
  const method = opt.extra?.assetTransferMethod;
  if (method !== undefined && method !== 'eip3009')
    return reject(ChoiceReason.unsupportedScheme, `assetTransferMethod ${clip(method)}`);
  if (opt.amount !== undefined && opt.maxAmountRequired !== undefined && opt.amount !== opt.maxAmountRequired) {
    return reject(ChoiceReason.malformedOption, 'amount and maxAmountRequired differ');
  }
  const amountText = opt.amount ?? opt.maxAmountRequired;
  if (amountText === undefined) return reject(ChoiceReason.malformedOption, 'amount: required');

  const asset = network.assets.find((a) => a.address.toLowerCase() === opt.asset.toLowerCase());
  if (asset === undefined) return reject(ChoiceReason.unknownAsset, `asset ${opt.asset} on ${network.caip2}`);
  // The EIP-712 domain is part of what is signed: a name or version other than the token's own makes a signature
  // the token rejects (Base USDC is "USD Coin"/"2", Base Sepolia USDC "USDC"/"2").
  const name = opt.extra?.name;
  const version = opt.extra?.version;
  if (name !== asset.eip712.name || version !== asset.eip712.version) {
    return reject(
      ChoiceReason.eip712DomainMismatch,
      `${asset.symbol} on ${network.caip2} is ${asset.eip712.name}/${asset.eip712.version}, offered ${clip(name ?? '(none)')}/${clip(version ?? '(none)')}`,
    );
  }
  const amount = BigInt(amountText);
  if (amount <= 0n || amount > MAX_INT64) return reject(ChoiceReason.amountOutOfRange, `amount ${clip(amountText)}`);
  const payee = payeeRefusal(opt.payTo, o.payer, o.spender);
  if (payee !== undefined) return reject(payee.reason, payee.detail);
  if (!recipientAllowed(opt.payTo, o.allowedRecipients))
    return reject(ChoiceReason.recipientNotAllowed, `payTo ${opt.payTo}`);
  return {
    ok: true,
    choice: {
      type: 'chosen',
      index,
      option: raw,
      network,
      asset,
      amount,
      payTo: getAddress(opt.payTo),
      maxTimeoutSeconds: opt.maxTimeoutSeconds,
    },
  };
}

/**
 * Picks the option to fund: scheme `exact`, a funded network of the environment, a known asset whose
 * `extra.name/version` equal our EIP-712 table (else BCK.ROUTER.0012), a positive amount that fits 64 bits, a
 * pay-to that is neither the zero address nor the payer and that the delegation allows. Prefers USDC, then the
 * merchant's order.
 */
export function chooseX402Option(accepts: readonly unknown[], o: X402ChooseOptions): X402Choice | NoChoice {
  const rejected: Rejection[] = [];
  let best: X402Choice | undefined;
  const n = Math.min(accepts.length, MAX_ACCEPTS);
  for (let i = 0; i < n; i++) {
    const j = judge(i, accepts[i], o);
    if (!j.ok) {
      rejected.push(j.rejection);
      continue;
    }
    if (best === undefined || (best.asset.symbol !== 'USDC' && j.choice.asset.symbol === 'USDC')) best = j.choice;
  }
  return best ?? noChoice(rejected, 'x402 option');
}
