// The router's JSON endpoints: mode A, mode B, the settled record, the ledger and its summary.
import { mintCredential } from '../../shared/router/mint.js';
import {
  countPayments,
  listPayments,
  paymentsCsv,
  paymentsSummary,
  recordSettled,
} from '../../shared/router/payments.js';
import { routePaid, routerSlot } from '../../shared/router/route.js';
import { MintBody, PaymentsQuery, RouteBody, SettledBody, SummaryQuery } from '../../shared/router/schemas.js';
import type { RouterServices } from '../../shared/router/services.js';
import { API_KEY } from '../../shared/auth/route-access.js';
import { AppError } from '../../shared/errors/app-error.js';
import { parseOr400, queryOf } from '../http/json.js';
import { readJson } from '../http/read-body.js';
import type { RouteTable } from '../http/route-table.js';
import { sendJson } from '../respond.js';

export function paymentRoutes(table: RouteTable, services: RouterServices): void {
  // Every JSON body of the router is at most BODY_LIMIT_BYTES, as the admin's (README): ROUTER_MAX_REQUEST_BYTES
  // is the streaming proxy's, whose body is relayed as bytes, not parsed into objects.
  const small = {
    maxBytes: services.ctx.config.BODY_LIMIT_BYTES,
    timeoutMs: services.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS,
  };
  table.add('POST', '/api/v1/router/payments', API_KEY, async ({ req, res, caller, facts }) => {
    const body = parseOr400(MintBody, await readJson(req, small), 'body');
    const minted = await mintCredential(services, caller, body);
    facts.paymentId = minted.paymentId;
    sendJson(res, 200, minted);
  });

  table.add('POST', '/api/v1/router/route', API_KEY, async ({ req, res, caller, facts }) => {
    // The user's slot before the body is read: a user's parallel uploads wait their turn or get 429, unread.
    const slot = routerSlot(services, caller);
    try {
      const body = parseOr400(RouteBody, await readJson(req, small), 'body');
      const routed = await routePaid(services, caller, body, slot);
      if (routed.payment !== undefined) facts.paymentId = routed.payment.paymentId;
      sendJson(res, 200, routed);
    } finally {
      slot();
    }
  });

  table.add('POST', '/api/v1/router/payments/:id/settled', API_KEY, async ({ req, res, caller, params, facts }) => {
    const body = parseOr400(SettledBody, await readJson(req, small), 'body');
    const id = params.id ?? '';
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new AppError('BCK.ROUTER.0004', 'payment not found');
    facts.paymentId = id;
    sendJson(res, 200, await recordSettled(services.ctx, caller.userId, id, body.txHash));
  });

  table.add('GET', '/api/v1/router/payments', API_KEY, async ({ res, target, caller }) => {
    const q = parseOr400(PaymentsQuery, queryOf(target.url()), 'query');
    const records = await listPayments(services.ctx, caller.userId, q);
    // `total` counts every matching payment, as the summary does; a page holds at most `limit` of them. A first
    // page that is not full holds them all, and needs no count.
    const total =
      q.page === 1 && records.length < q.limit ? records.length : await countPayments(services.ctx, caller.userId, q);
    if (q.format === 'csv') {
      const csv = paymentsCsv(records);
      res.writeHead(200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-length': Buffer.byteLength(csv),
        // A download, not a page (RFC 6266); the count of all matching rows, as the JSON listing's `total`.
        'content-disposition': 'attachment; filename="router-payments.csv"',
        'x-total-count': String(total),
      });
      res.end(csv);
      return;
    }
    // The shape of the service's other paged lists: { total, page, offset (results per page), <items> }.
    sendJson(res, 200, { total, page: q.page, offset: q.limit, payments: records });
  });

  table.add('GET', '/api/v1/router/payments/summary', API_KEY, async ({ res, target, caller }) => {
    const q = parseOr400(SummaryQuery, queryOf(target.url()), 'query');
    sendJson(res, 200, await paymentsSummary(services.ctx, caller.userId, q));
  });
}
