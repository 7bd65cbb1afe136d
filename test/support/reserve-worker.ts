// A separate real process that reserves against a delegation: `node --import tsx reserve-worker.ts <json>`.
// Used to spread concurrent reserves over two processes sharing one database.
import { loadConfig } from '../../config/index.js';
import { createContext } from '../../shared/context.js';
import { reserve } from '../../shared/delegations/cap.js';
import { createLogger } from '../../shared/log.js';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  delegationId: string;
  userId: string;
  count: number;
  amountCents: string;
};
const config = loadConfig();
const ctx = await createContext(config, createLogger({ LOG_LEVEL: 'warn' }, 'reserve-worker'));
const results = await Promise.all(
  Array.from({ length: args.count }, (_, i) =>
    reserve(ctx, {
      delegationId: args.delegationId,
      userId: args.userId,
      amountCents: BigInt(args.amountCents),
      reference: `worker-${process.pid}-${i}`,
    }),
  ),
);
await ctx.db.close();
process.stdout.write(
  `${JSON.stringify({
    reserved: results.filter((r) => r.type === 'reserved').length,
    refused: results.filter((r) => r.type === 'refused').length,
  })}\n`,
);
