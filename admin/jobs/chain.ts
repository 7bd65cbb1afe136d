// The admin process's work for SETTLEMENT_BACKEND=rpc, every CHAIN_RECONCILE_INTERVAL_MS: the chain decides what
// was paid. First the router payments (used -> Settled, expired -> Expired and caps released), then the fee legs
// whose merchant leg was just seen used, then plan orders a request left unfinished. Each step's failure (a node
// that does not answer, an operator without gas) is logged and never stops the others; the next run tries again.
import type { ServiceContext } from '../../shared/context.js';
import { reconcileChainOrders } from '../../shared/credits/chain-order.js';
import type { Logger } from '../../shared/log.js';
import { type Job, messageOf } from './job.js';
import { collectFeesOnce } from './chain-fee-collector.js';
import { reconcileOnce } from './chain-reconciler.js';
import type { ChainClient } from '../../shared/settlement/chain/client.js';

export function chainJob(ctx: ServiceContext, chain: ChainClient, log: Logger): Job {
  const failed = (what: string) => (err: unknown) => log.warn({ err: messageOf(err) }, what);
  return {
    name: 'chain reconciliation',
    intervalMs: ctx.config.CHAIN_RECONCILE_INTERVAL_MS,
    run: async () => {
      await reconcileOnce(ctx, chain)
        .then((r) => {
          if (r.settled + r.expired > 0) log.info(r, 'reconciled payments with the chain');
        })
        .catch(failed('reconciling with the chain failed'));
      await collectFeesOnce(ctx, chain)
        .then((fees) => {
          if (fees.collected + fees.refused > 0) log.info(fees, 'collected fee legs on chain');
        })
        .catch(failed('fee leg collection failed'));
      await reconcileChainOrders(ctx, chain)
        .then((n) => {
          if (n > 0) log.info({ orders: n }, 'finished plan orders from the chain');
        })
        .catch(failed('reconciling plan orders with the chain failed'));
    },
  };
}
