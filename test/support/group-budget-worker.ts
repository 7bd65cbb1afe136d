// A separate real process that spends against a group budget and a delegation in one spend, as a router payment
// of an organization member does: `node --import tsx group-budget-worker.ts <json>`. Used to race spends from
// several processes sharing one database.
import { loadConfig } from '../../config/index.js';
import { createContext } from '../../shared/context.js';
import { createLogger } from '../../shared/log.js';
import { SpendRefused, delegationAccount, groupBudgetAccount, reserveIn } from '../../shared/spend/index.js';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  budgetId: string;
  orgId: string;
  delegations: { id: string; userId: string }[];
  count: number;
  amountCents: string;
  now: string;
};
const config = loadConfig();
const ctx = await createContext(config, createLogger({ LOG_LEVEL: 'warn' }, 'group-budget-worker'));
const budget = groupBudgetAccount(args.budgetId, args.orgId);
const now = new Date(args.now);
const amountCents = BigInt(args.amountCents);
const outcomes = await Promise.all(
  Array.from({ length: args.count }, async (_, i) => {
    const d = args.delegations[i % args.delegations.length];
    if (d === undefined) throw new Error('no delegation');
    // Half the spends name the delegation first: the spend module must still lock the budget first.
    const charges = [
      { account: budget, amountCents },
      { account: delegationAccount(d.id, d.userId), amountCents },
    ];
    if (i % 2 === 1) charges.reverse();
    try {
      await ctx.db.sql.transaction((tx) => reserveIn(tx, { charges, reference: `worker-${process.pid}-${i}` }, now));
      return 'reserved';
    } catch (err) {
      if (err instanceof SpendRefused && err.account.kind === 'groupBudget') return 'refused';
      return `error: ${String(err)}`;
    }
  }),
);
await ctx.db.close();
process.stdout.write(
  `${JSON.stringify({
    reserved: outcomes.filter((o) => o === 'reserved').length,
    refused: outcomes.filter((o) => o === 'refused').length,
    errors: outcomes.filter((o) => o.startsWith('error')),
  })}\n`,
);
