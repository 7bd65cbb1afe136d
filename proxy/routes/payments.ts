// The router's JSON endpoints: mode A, mode B, the settled record, the ledger and its summary.
import { issueCredential } from '../../shared/router/flows/credentials.js';
import { countPayments, listPayments } from '../../shared/router/payment-listing.js';
import { paymentsCsv } from '../../shared/router/payments-csv.js';
import { paymentsSummary } from '../../shared/router/payments-summary.js';
import { recordSettled } from '../../shared/router/payment-settled.js';
import { routePaid, routerSlot } from '../../shared/router/flows/route.js';
import { type RouterPrincipal, paymentOwnerOf } from '../../shared/router/principal.js';
import {
  CommerceRouteBody,
  CredentialBody,
  PaymentsQuery,
  RouteBody,
  SettledBody,
  SummaryQuery,
} from '../../shared/router/requests.js';
import { PROXY_ROUTES } from '../../shared/router/routes.js';
import type { RouterServices } from '../../shared/router/services.js';
import type { IncomingMessage } from 'node:http';
import type { CommerceCaller } from '../../shared/auth/caller.js';
import { AppError } from '../../shared/errors/app-error.js';
import { parseOr400 } from '../../shared/router/parse.js';
import { queryOf } from '../http/json.js';
import { readJson } from '../http/read-body.js';
import type { RouteTable, RouterRequest } from '../http/route-table.js';
import { sendJson, writeHead } from '../respond.js';

export function paymentRoutes(table: RouteTable, services: RouterServices): void {
  // Every JSON body of the router is at most BODY_LIMIT_BYTES, as the admin's (README): ROUTER_MAX_REQUEST_BYTES
  // is the streaming proxy's, whose body is relayed as bytes, not parsed into objects.
  const small = {
    maxBytes: services.ctx.config.BODY_LIMIT_BYTES,
    timeoutMs: services.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS,
  };
  table.add(PROXY_ROUTES.issueCredential, async ({ req, res, caller, facts }) => {
    const body = parseOr400(CredentialBody, await readJson(req, small), 'body');
    const issued = await issueCredential(services, caller, body);
    facts.paymentId = issued.paymentId;
    sendJson(res, 200, issued);
  });

  /**
   * Mode B for both routes: `bodyOf` reads the request into a route body naming the delegation that pays. The
   * user's slot is taken before the body is read: a user's parallel uploads wait their turn or get 429, unread;
   * the slot is per user, so a user's keys and every connector acting for them share the limit.
   */
  const modeB =
    <C extends RouterPrincipal>(bodyOf: (req: IncomingMessage, caller: C) => Promise<RouteBody>) =>
    async ({ req, res, caller, facts }: RouterRequest<C>) => {
      const slot = routerSlot(services, caller);
      try {
        const routed = await routePaid(services, caller, await bodyOf(req, caller), slot);
        if (routed.payment !== undefined) facts.paymentId = routed.payment.paymentId;
        sendJson(res, 200, routed);
      } finally {
        slot();
      }
    };

  table.add(
    PROXY_ROUTES.route,
    modeB(async (req) => parseOr400(RouteBody, await readJson(req, small), 'body')),
  );

  // A connector's mode B: the delegation is its grant's, never the body's (CommerceRouteBody refuses one).
  table.add(
    PROXY_ROUTES.commerceRoute,
    modeB(async (req, caller: CommerceCaller) => ({
      ...parseOr400(CommerceRouteBody, await readJson(req, small), 'body'),
      delegationId: caller.delegationId,
    })),
  );

  table.add(PROXY_ROUTES.settled, async ({ req, res, caller, params, facts }) => {
    const body = parseOr400(SettledBody, await readJson(req, small), 'body');
    const id = params.id ?? '';
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new AppError('BCK.ROUTER.0004', { details: 'payment not found' });
    facts.paymentId = id;
    sendJson(res, 200, await recordSettled(services.ctx, services.settlement.chain, caller.userId, id, body.txHash));
  });

  table.add(PROXY_ROUTES.payments, async ({ res, target, caller }) => {
    const q = parseOr400(PaymentsQuery, queryOf(target.url()), 'query');
    // A connector's token sees only its grant's payments; the user's key sees every one, with its clientId.
    const owner = paymentOwnerOf(caller);
    const records = await listPayments(services.ctx, owner, q);
    // `total` counts every matching payment, as the summary does; a page holds at most `limit` of them. A first
    // page that is not full holds them all, and needs no count.
    const total =
      q.page === 1 && records.length < q.limit ? records.length : await countPayments(services.ctx, owner, q);
    if (q.format === 'csv') {
      const csv = paymentsCsv(records);
      writeHead(res, 200, {
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

  table.add(PROXY_ROUTES.summary, async ({ res, target, caller }) => {
    const q = parseOr400(SummaryQuery, queryOf(target.url()), 'query');
    sendJson(res, 200, await paymentsSummary(services.ctx, paymentOwnerOf(caller), q));
  });
}
