// Shared fixtures of the merchant and protocol tests: the buyer key, merchant addresses, the asset table lookup.
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../../../config/index.js';
import { type Asset, NETWORKS } from '../../../shared/assets.js';

export function assetOf(environment: Config['ENVIRONMENT'], symbol: Asset['symbol']): Asset {
  const a = NETWORKS[environment].assets.find((x) => x.symbol === symbol);
  if (a === undefined) throw new Error(`${symbol} missing from the ${environment} asset table`);
  return a;
}

/** The buyer's custodial key in tests (never used outside tests). */
export const BUYER_KEY: Hex = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
export const BUYER = privateKeyToAccount(BUYER_KEY).address;
/** The merchants' pay-to addresses. */
export const MERCHANT_V2 = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const MERCHANT_V1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const MERCHANT_MPP = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
