// What the operator CLI prints about wallets (`wallets balance`, `wallets address`), for either backend.
import { type Address, getAddress } from 'viem';
import { ensureOperatorWallet } from '../accounts/service-wallets.js';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import { emSql } from '../db/sql.js';
import { toWire } from '../money.js';
import { chainClientOf } from './backend.js';
import { createBalanceReads } from './chain/balance-reads.js';
import { reservedOfIn } from './chain/reservations.js';
import { balanceOf } from './token-ledger.js';

interface AssetBalance {
  symbol: string;
  asset: string;
  /** ledger: the internal balance; rpc: balanceOf on chain at `block`. */
  balance: string;
  /** rpc only: authorized by payroute and not yet counted by that balance, and what is left to authorize. */
  reserved?: string;
  available?: string;
}

/** A wallet's balance of each token of the environment. With rpc, read on chain now (and recorded). */
export async function walletBalances(ctx: ServiceContext, rawAddress: string) {
  const address = getAddress(rawAddress);
  const network = NETWORKS[ctx.config.ENVIRONMENT];
  const s = ctx.config.settlement;
  if (s.backend === 'ledger') {
    const balances: AssetBalance[] = [];
    for (const a of network.assets)
      balances.push({ symbol: a.symbol, asset: a.address, balance: toWire(await balanceOf(ctx, address, a.address)) });
    return { address, backend: 'ledger', network: network.caip2, balances };
  }
  const reads = createBalanceReads(ctx, chainClientOf(ctx.config, s.rpcUrl));
  const balances: AssetBalance[] = [];
  let block = -1n;
  for (const a of network.assets) {
    const read = await reads.refresh(address, a.address as Address);
    block = read.block;
    const reserved = await reservedOfIn(emSql(ctx.db.em(), ctx.db.dialect), address, a.address);
    balances.push({
      symbol: a.symbol,
      asset: a.address,
      balance: toWire(read.balance),
      reserved: toWire(reserved),
      available: toWire(read.balance - reserved),
    });
  }
  return { address, backend: 'rpc', network: network.caip2, block: block.toString(), balances };
}

/** The operator wallet (it pays the gas of orders and fee legs with rpc) and, with rpc, its gas balance in wei. */
export async function operatorWalletReport(ctx: ServiceContext) {
  const address = getAddress(await ensureOperatorWallet(ctx));
  const network = NETWORKS[ctx.config.ENVIRONMENT];
  const s = ctx.config.settlement;
  if (s.backend === 'ledger') return { address, backend: 'ledger', network: network.caip2 };
  const chain = chainClientOf(ctx.config, s.rpcUrl);
  const gasWei = await chain.publicClient.getBalance({ address });
  return { address, backend: 'rpc', network: network.caip2, gasWei: gasWei.toString() };
}
