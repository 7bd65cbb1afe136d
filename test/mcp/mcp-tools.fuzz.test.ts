// The tools' arguments, property-tested against a running proxy: any arguments to any tool (hostile values, wrong
// types, arrays, nesting) are answered with a result or a JSON-RPC error, never an HTTP 5xx; and a refused
// call_service pays nothing (the grant's payment rows grow only by the calls that paid).
import test from 'ava';
import fc from 'fast-check';
import { RouterPayment } from '../../shared/db/entities/index.js';
import { type Stack, startStack } from '../support/stack.js';
import { initializeMessage, mcpGrant, rpc } from '../support/mcp.js';
import { type Merchants, PAID_ENV, fundedUser, startMerchants } from '../support/router-fixtures.js';

const RUNS = Math.min(Number(process.env.FUZZ_RUNS ?? 150), 150);

let s: Stack;
let m: Merchants;
test.before(async () => {
  m = await startMerchants(10_000n);
  s = await startStack('sqlite', PAID_ENV);
});
test.after.always(async () => {
  await s?.stop();
  await m?.close();
});

const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', '../admin', 'http://169.254.169.254/latest', 'GET', 'TRACE', '\u0000', 'x'.repeat(5000)),
);

test(`any arguments to any tool (${RUNS} runs): never a 5xx, never a payment from a refused call`, async (t) => {
  const u = await fundedUser(s, m.chain, 100_000_000n);
  const g = await mcpGrant(s, u, { spending_limit_cents: 1_000_000 });
  const init = await rpc(s.proxyUrl, g.token, initializeMessage());
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
  const paidUrl = m.v2.url + m.v2.paidPath;
  const args = fc.oneof(
    // Calls that may pay: the paid merchant with a few optional fields.
    fc.record(
      {
        url: fc.constant(paidUrl),
        method: fc.constantFrom('GET', 'POST'),
        headers: fc.dictionary(fc.constantFrom('x-a', 'accept', 'x-b'), fc.string({ maxLength: 8 }), { maxKeys: 2 }),
        requestId: fc.string({ minLength: 1, maxLength: 12 }),
      },
      { requiredKeys: ['url'] },
    ),
    fc.record(
      {
        url: fc.oneof(fc.constant(paidUrl), value),
        slug: value,
        path: value,
        method: value,
        headers: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 3 }), value),
        body: value,
        requestId: value,
        delegationId: value,
        query: value,
        limit: fc.oneof(fc.integer(), value),
        cursor: value,
      },
      { requiredKeys: [] },
    ),
    value,
  );
  const rows = () => s.ctx.db.em().fork().count(RouterPayment, { grantId: g.grantId });
  let id = 10;
  const seen = { paid: 0, refused: 0, rpcErrors: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('call_service', 'search_services', 'get_spending', 'list_payments'),
      args,
      async (name, a) => {
        const before = await rows();
        const r = await rpc(
          s.proxyUrl,
          g.token,
          { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: a } },
          headers,
        );
        if (r.status >= 500) return false;
        const body = r.body as {
          result?: { isError?: boolean; structuredContent?: { paid?: boolean } };
          error?: unknown;
        };
        const paid = body.result?.isError !== true && body.result?.structuredContent?.paid === true;
        if (paid) seen.paid += 1;
        else if (body.result?.isError === true) seen.refused += 1;
        else if (body.error !== undefined) seen.rpcErrors += 1;
        const after = await rows();
        return after === before + (paid ? 1 : 0);
      },
    ),
    { numRuns: RUNS },
  );
  // Not vacuous: the runs paid, reached the tools' refusals and the protocol's own argument checks (JSON-RPC errors).
  t.true(seen.paid > 0, JSON.stringify(seen));
  t.true(seen.refused > 0, JSON.stringify(seen));
  t.true(seen.rpcErrors > 0, JSON.stringify(seen));
  t.log(seen);
});
