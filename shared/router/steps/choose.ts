// Step "choose" (router flow step 5): detect and choose what to pay, with the delegation's restrictions, the paying
// wallet and the operator's settings. Called by the orchestrator (../issue-steps.ts); calls no other step.
import { getAddress } from 'viem';
import { AppError } from '../../errors/app-error.js';
import { type Asset, NETWORKS } from '../../assets.js';
import { decodeBase64, isJsonObject, parseJson } from '../../protocols/encoding.js';
import { exceedsJsonDepth } from '../../protocols/json-depth.js';
import { type PaymentChoice, type UpstreamAnswer, choosePayment } from '../../protocols/payment.js';
import type { NoChoice } from '../../protocols/reasons.js';
import { credentialHeaderRefusal } from '../../upstream/index.js';
import { currencyPays, fundedSymbol } from '../../spend/index.js';
import type { RouterServices } from '../services.js';
import type { DelegationRow } from '../delegation-snapshot.js';

/**
 * `payer`: the paying wallet, which an offer may not name as its payee; `spender`, when an organization wallet pays,
 * the spending member's own wallet, which it may not name either.
 */
export function chooseOptions(
  services: RouterServices,
  delegation: DelegationRow,
  payer: string,
  spender?: string | undefined,
) {
  const c = services.ctx.config;
  const env = NETWORKS[c.ENVIRONMENT];
  const symbol = fundedSymbol(delegation.currency);
  const configured =
    c.ROUTER_MPP_ASSETS === undefined
      ? env.assets
      : env.assets.filter((a) => (c.ROUTER_MPP_ASSETS ?? '').split(',').some((x) => getAddress(x) === a.address));
  // MPP: only the currency the delegation pays (a EUR delegation must not pick a USDC challenge).
  const inCurrency = configured.filter((a) => a.symbol === symbol);
  const mppAssets: readonly Asset[] = inCurrency.length > 0 ? inCurrency : configured;
  return {
    environment: c.ENVIRONMENT,
    fundedNetworks: c.ROUTER_FUNDED_NETWORKS?.split(','),
    allowedRecipients: delegation.allowedRecipients ?? undefined,
    payer,
    spender,
    mppAssets,
    // An MPP challenge naming a field the outbound module would refuse is refused here, before the payment,
    // so the payment is never made for a credential that cannot be sent.
    credentialHeaderRefusal,
  };
}

export function refusal(none: NoChoice): AppError {
  return new AppError(none.code, { details: none.message, params: { reason: none.reason } });
}

/**
 * x402 options in a known token of ANOTHER currency than the delegation pays are left out before choosing, so
 * "prefer USDC" cannot pick a token a EUR delegation may not spend while the merchant also offers EURC. When
 * nothing would be left the answer is kept as it is (the refusal then names the currency mismatch).
 */
function inDelegationCurrency(
  services: RouterServices,
  delegation: DelegationRow,
  answer: UpstreamAnswer,
): UpstreamAnswer {
  const symbol = fundedSymbol(delegation.currency);
  const foreign = new Set(
    NETWORKS[services.ctx.config.ENVIRONMENT].assets
      .filter((a) => a.symbol !== symbol)
      .map((a) => a.address.toLowerCase()),
  );
  const keep = (o: unknown) => !(isJsonObject(o) && typeof o.asset === 'string' && foreign.has(o.asset.toLowerCase()));
  /** The object with `accepts` narrowed, or undefined when it cannot or need not be narrowed. */
  const narrowed = (value: unknown): Record<string, unknown> | undefined => {
    if (!isJsonObject(value) || !Array.isArray(value.accepts)) return undefined;
    const kept = value.accepts.filter(keep);
    if (kept.length === 0 || kept.length === value.accepts.length) return undefined;
    return { ...value, accepts: kept };
  };
  if (answer.paymentRequired !== undefined) {
    const n = narrowed(answer.paymentRequired);
    return n === undefined ? answer : { ...answer, paymentRequired: n };
  }
  // The decoded header is handed on as the object it decodes to (not encoded again): the decoder takes it as it
  // takes a mode A target, with the same checks (json-depth.ts among them).
  const header = answer.header('PAYMENT-REQUIRED');
  if (header !== undefined) {
    const text = decodeBase64(header.trim());
    const json = text === undefined ? undefined : parseJson(text);
    const n = json?.ok === true ? narrowed(json.value) : undefined;
    return n === undefined ? answer : { ...answer, paymentRequired: n };
  }
  // x402 v1 has no decoded form here: the narrowed body is encoded again, unless it nests too deeply for
  // JSON.stringify (RangeError, a 500); the decoder refuses that body as malformed anyway.
  if (answer.body === undefined || !answer.body.includes('"accepts"')) return answer;
  const json = parseJson(answer.body);
  const n = json.ok ? narrowed(json.value) : undefined;
  return n === undefined || exceedsJsonDepth(n) ? answer : { header: answer.header, body: JSON.stringify(n) };
}

/**
 * Chooses from a merchant's 402 answer what `payer` pays with the delegation; nothing fundable -> 400 naming why.
 * An option whose payee is the zero address or `payer` itself is not fundable: another option may be chosen.
 */
export function chooseFromAnswer(
  services: RouterServices,
  delegation: DelegationRow,
  answer: UpstreamAnswer,
  payer: string,
  spender?: string | undefined,
): PaymentChoice {
  const opts = chooseOptions(services, delegation, payer, spender);
  const r = choosePayment(inDelegationCurrency(services, delegation, answer), opts);
  if (r.type === 'none') throw refusal(r);
  // Every x402 option was in the other currency (kept above so the refusal could name it): x402 is not fundable
  // by this delegation, so MPP is (x402 is paid when one of its options is fundable, else MPP; never both).
  if (r.type === 'x402' && !currencyPays(delegation.currency, r.choice.asset.symbol)) {
    const mppOnly: UpstreamAnswer = {
      header: (n) => (n.toLowerCase() === 'payment-required' ? undefined : answer.header(n)),
    };
    const mpp = choosePayment(mppOnly, opts);
    if (mpp.type === 'mpp') return mpp;
  }
  return r;
}
