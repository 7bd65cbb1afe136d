// The router's JSON endpoints: mode A, mode B, the settled record, the ledger and its summary.
import { mintCredential } from '../../shared/router/mint.js';
import { countPayments, listPayments, paymentsCsv, paymentsSummary, recordSettled } from '../../shared/router/payments.js';
import { routePaid } from '../../shared/router/route.js';
import { MintBody, PaymentsQuery, RouteBody, SettledBody, SummaryQuery } from '../../shared/router/schemas.js';
import type { RouterContext } from '../../shared/router/context.js';
import { AppError } from '../../shared/errors/app-error.js';
import { parseOr400, queryOf } from '../http/json.js';
import { readJson } from '../http/read-body.js';
import type { RouteTable } from '../http/route-table.js';
import { sendJson } from '../respond.js';

const JSON_LIMIT = 1_048_576;

export function paymentRoutes(table: RouteTable, rc: RouterContext): void {
  const timeoutMs = rc.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS;
  const small = { maxBytes: JSON_LIMIT, timeoutMs };
  const routed = { maxBytes: rc.ctx.config.ROUTER_MAX_REQUEST_BYTES, timeoutMs };
  table.add('POST', '/api/v1/router/payments', async ({ req, res, principal }) => {
    const body = parseOr400(MintBody, await readJson(req, small), 'body');
    sendJson(res, 200, await mintCredential(rc, principal, body));
  });

  table.add('POST', '/api/v1/router/route', async ({ req, res, principal }) => {
    const raw = await readJson(req, routed);
    const body = parseOr400(RouteBody, raw, 'body');
    sendJson(res, 200, await routePaid(rc, principal, body));
  });

  table.add('POST', '/api/v1/router/payments/:id/settled', async ({ req, res, principal, params }) => {
    const body = parseOr400(SettledBody, await readJson(req, small), 'body');
    const id = params.id ?? '';
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new AppError('BCK.ROUTER.0004', 'payment not found');
    sendJson(res, 200, await recordSettled(rc.ctx, principal.userId, id, body.txHash));
  });

  table.add('GET', '/api/v1/router/payments', async ({ res, target, principal }) => {
    const q = parseOr400(PaymentsQuery, queryOf(target.url()), 'query');
    const records = await listPayments(rc.ctx, principal.userId, q);
    if (q.format === 'csv') {
      const csv = paymentsCsv(records);
      res.writeHead(200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-length': Buffer.byteLength(csv),
        // A download, not a page (RFC 6266).
        'content-disposition': 'attachment; filename="router-payments.csv"',
      });
      res.end(csv);
      return;
    }
    // `total` counts every matching payment, as the summary does; `payments` holds at most `limit` of them (a page
    // that is not full holds them all, and needs no count).
    const total = records.length < q.limit ? records.length : await countPayments(rc.ctx, principal.userId, q);
    sendJson(res, 200, { total, payments: records });
  });

  table.add('GET', '/api/v1/router/payments/summary', async ({ res, target, principal }) => {
    const q = parseOr400(SummaryQuery, queryOf(target.url()), 'query');
    sendJson(res, 200, await paymentsSummary(rc.ctx, principal.userId, q));
  });
}
