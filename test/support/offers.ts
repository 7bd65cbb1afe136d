// Payment offers as the official merchants write them, for the protocol decoder tests.
import { assetOf } from './merchants/fixtures.js';

export const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const S_USDC = assetOf('sandbox', 'USDC');

/** A v2 option as @x402/express offers it. */
export const v2Option = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '10000',
  asset: S_USDC.address,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: 'USDC', version: '2' },
  ...over,
});
