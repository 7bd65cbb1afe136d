// A local chain with a paying merchant on it, for the tests of the rpc settlement backend: anvil (chain id 84532)
// with the EIP-3009 tokens at the sandbox USDC and EURC addresses and Multicall3, and the official @x402/express
// merchant whose @x402/evm facilitator (a funded account of its own) settles on that chain for real.
import {
  type Anvil,
  type DevAccount,
  type TokenHandle,
  deployMulticall3,
  deploySandboxTokens,
  facilitatorSigner,
  freshAccount,
  startAnvil,
} from './anvil.js';
import { MERCHANT_V2 } from './merchants/fixtures.js';
import { type X402V2Merchant, startX402V2Merchant } from './merchants/x402-v2.js';
import test from 'ava';
import { EURC, PAID_ENV, USDC } from './router-fixtures.js';

export interface ChainMerchant {
  readonly anvil: Anvil;
  readonly usdc: TokenHandle;
  readonly merchant: X402V2Merchant;
  readonly facilitator: DevAccount;
  /** Stops the merchant, then the chain. */
  stop(): Promise<void>;
}

/** Starts the chain and a merchant asking `price` atomic USDC; `env.RPC_URL_84532` is set to the chain. */
export async function startChainMerchant(price: bigint, env: Record<string, string>): Promise<ChainMerchant> {
  const anvil = await startAnvil();
  env.RPC_URL_84532 = anvil.url;
  const tokens = await deploySandboxTokens(anvil);
  await deployMulticall3(anvil);
  const facilitator = await freshAccount(anvil);
  const merchant = await startX402V2Merchant({
    chain: facilitatorSigner(anvil, facilitator),
    payTo: MERCHANT_V2,
    usdcAmount: price.toString(),
    usdc: USDC,
    eurc: EURC,
  });
  return {
    anvil,
    usdc: tokens.USDC,
    merchant,
    facilitator,
    stop: async () => {
      await merchant.close();
      await anvil.stop();
    },
  };
}

/** A paid stack settling on the chain: balances are the token's balanceOf, read afresh for every payment. */
export const CHAIN_ENV: Readonly<Record<string, string>> = {
  ...PAID_ENV,
  SETTLEMENT_BACKEND: 'rpc',
  CHAIN_BALANCE_TTL_MS: '0',
};

/**
 * Starts the chain and merchant before the file's tests (registered first, so `env` holds RPC_URL_84532 when
 * forEachDb's stacks start) and stops them after; `started` receives them.
 */
export function useChainMerchant(
  price: bigint,
  env: Record<string, string>,
  started: (c: ChainMerchant) => void,
): void {
  let chain: ChainMerchant | undefined;
  test.serial.before(async () => {
    chain = await startChainMerchant(price, env);
    started(chain);
  });
  test.after.always(async () => {
    await chain?.stop();
  });
}
