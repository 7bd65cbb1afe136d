// Bodies of the router endpoints, validated at the boundary. Strings are text.ts's (bounded;
// a control character or an unpaired surrogate is a 400 naming the field), except what the router forwards to the
// merchant as it is: `body` (any JSON) and header values, which the outbound module checks as header values.
import { z } from 'zod';
import { line, wholeNumber } from '../text.js';
import { safePathSegments } from './catalog.js';

export const RequestId = line(200)
  .min(1)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

// `new URL` (z.url's check) silently drops tabs and line breaks and trims C0 controls: refused before it.
const AbsoluteHttpUrl = line(2048).pipe(z.url({ protocol: /^https?$/ }));

/**
 * The control headers of the streaming proxy (ALL /router/proxy). Node decodes header bytes as latin1, so a UTF-8
 * value arrives as C1 characters: line() refuses it, as it does TAB (the only control HTTP lets through). Node's
 * parser has already refused NUL, CR and LF.
 */
export const ProxyHeaders = z.object({
  'x-router-target-url': line(2048).min(1),
  'x-router-delegation-id': z.uuid(),
  'x-router-request-id': RequestId,
  'x-router-upstream-authorization': line(8192).optional(),
});
export type ProxyHeaders = z.output<typeof ProxyHeaders>;

export const CredentialBody = z.object({
  delegationId: z.uuid(),
  protocol: z.enum(['x402', 'mpp']),
  target: z.union([
    z
      .object({
        accepts: z.array(z.unknown()).min(1).max(64),
        x402Version: z.union([z.literal(1), z.literal(2)]).default(2),
      })
      .loose(),
    z.object({ challenge: line(16_384).min(1) }).loose(),
  ]),
  resourceUrl: AbsoluteHttpUrl.optional(),
  requestId: RequestId.optional(),
});
export type CredentialBody = z.output<typeof CredentialBody>;

// Opaque: forwarded as written; the outbound module refuses what no header value may hold (NUL, CR, LF).
const HeaderValue = z.string().max(8192);

/** The fields of mode B; the two routes differ only in where the delegation comes from. */
const RouteFields = z.object({
  requestId: RequestId,
  url: line(2048).min(1).optional(),
  slug: line(63).min(1).optional(),
  path: line(2048).optional(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  headers: z
    .record(line(256).min(1), HeaderValue)
    .refine((h) => Object.keys(h).length <= 64, 'at most 64 headers')
    .optional(),
  body: z.unknown().optional(),
  protocol: z.enum(['x402', 'mpp']).optional(),
});

/** The checks both routes make of the whole body. */
function routeRules<S extends z.ZodType<z.output<typeof RouteFields>>>(schema: S) {
  return (
    schema
      .refine((b) => (b.url === undefined) !== (b.slug === undefined), {
        message: 'exactly one of url and slug is required',
        path: ['url'],
      })
      // Step 1: an unsafe path is refused up front, whatever it would be appended to.
      .refine((b) => b.path === undefined || safePathSegments(b.path) !== undefined, {
        message: 'must be plain path segments (no //, @, .., \\ or absolute URL)',
        path: ['path'],
      })
  );
}

/** POST /router/route: the caller names one of the user's delegations. */
export const RouteBody = routeRules(RouteFields.extend({ delegationId: z.uuid() }));
export type RouteBody = z.output<typeof RouteBody>;

/**
 * POST /router/commerce/route: the delegation is the grant's. A `delegationId` in the body is refused, never
 * ignored: a connector that names one believes it chooses what pays, and must learn that it does not.
 */
export const CommerceRouteBody = routeRules(
  RouteFields.extend({
    delegationId: z
      .never({ error: "not accepted: the commerce route pays from the grant's own delegation" })
      .optional(),
  }),
);
export type CommerceRouteBody = z.output<typeof CommerceRouteBody>;

export const SettledBody = z.object({
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte hex transaction hash'),
});

const MAX_BOUND_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A `from` / `to` bound: an ISO date or date-time, within 1970-01-01 and 9999-12-31 UTC. PostgreSQL refuses
 * years it cannot store (year 0, or 10000 after a -23:59 offset) with an error that was a 500. The range is
 * [from, to): a date-time `to` is excluded, a date-only `to` names its whole (UTC) day, so `from=D&to=D` is day D.
 */
const queryDate = (end: boolean) =>
  z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .or(
      z.iso.date().transform((s) => {
        const d = new Date(s);
        return end ? new Date(Math.min(d.getTime() + 86_400_000, MAX_BOUND_MS)) : d;
      }),
    )
    .refine((d) => d.getTime() >= 0 && d.getUTCFullYear() <= 9999, 'must fall between 1970-01-01 and 9999-12-31 (UTC)');
const FromDate = queryDate(false);
const ToDate = queryDate(true);

const inOrder = (q: { from?: Date | undefined; to?: Date | undefined }) =>
  q.from === undefined || q.to === undefined || q.from <= q.to;
const ORDER = { message: 'must not be after to', path: ['from'] };

/**
 * The ledger listing: newest first, `limit` rows (1-1000, default 1000) per page, `page` 1-based. `offset` is the
 * contract's name for results per page (its paging convention): a synonym of `limit`, and both must agree.
 */
export const PaymentsQuery = z
  .object({
    delegationId: z.uuid().optional(),
    from: FromDate.optional(),
    to: ToDate.optional(),
    format: z.enum(['json', 'csv']).default('json'),
    limit: wholeNumber(1, 1000).optional(),
    offset: wholeNumber(1, 1000).optional(),
    page: wholeNumber(1, 1_000_000).default(1),
  })
  .refine(inOrder, ORDER)
  .refine((q) => q.limit === undefined || q.offset === undefined || q.limit === q.offset, {
    message: 'offset (results per page) and limit must agree when both are given',
    path: ['offset'],
  })
  .transform(({ offset, limit, ...q }) => ({ ...q, limit: limit ?? offset ?? 1000 }));

/** The summary takes the listing's filters (delegationId, from, to). */
export const SummaryQuery = z
  .object({
    granularity: z.enum(['day', 'week', 'month']).default('day'),
    delegationId: z.uuid().optional(),
    from: FromDate.optional(),
    to: ToDate.optional(),
  })
  .refine(inOrder, ORDER);
