// Known stablecoins per environment (6 decimals). The sandbox runs on Base Sepolia, live on Base.
// EIP-712 domain names differ by chain (each token contract's own `name()`/`version()`): keep them beside the addresses.
import { getAddress } from 'viem';
import type { Config } from '../config/index.js';
import { InvariantError } from './errors/invariant.js';

export interface Asset {
  readonly symbol: 'USDC' | 'EURC';
  readonly address: `0x${string}`;
  readonly decimals: 6;
  readonly eip712: { readonly name: string; readonly version: string };
}

export interface Network {
  readonly caip2: `eip155:${number}`;
  readonly chainId: number;
  readonly name: string;
  readonly assets: readonly Asset[];
}

export const NETWORKS: Record<Config['ENVIRONMENT'], Network> = {
  sandbox: {
    caip2: 'eip155:84532',
    chainId: 84532,
    name: 'base-sepolia',
    assets: [
      {
        symbol: 'USDC',
        address: getAddress('0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
        decimals: 6,
        eip712: { name: 'USDC', version: '2' },
      },
      {
        symbol: 'EURC',
        address: getAddress('0x808456652fdb597867f38412077A9182bf77359F'),
        decimals: 6,
        eip712: { name: 'EURC', version: '2' },
      },
    ],
  },
  live: {
    caip2: 'eip155:8453',
    chainId: 8453,
    name: 'base',
    assets: [
      {
        symbol: 'USDC',
        address: getAddress('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
        decimals: 6,
        eip712: { name: 'USD Coin', version: '2' },
      },
      {
        symbol: 'EURC',
        address: getAddress('0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42'),
        decimals: 6,
        eip712: { name: 'EURC', version: '2' },
      },
    ],
  },
};

export function usdcOf(environment: Config['ENVIRONMENT']): Asset {
  const usdc = NETWORKS[environment].assets.find((a) => a.symbol === 'USDC');
  if (usdc === undefined) throw new InvariantError('USDC missing from the asset table');
  return usdc;
}
