// The MCP tools: each is an HTTP route of the service seen through another door, with that route's services,
// checks and refusal codes (never rules of its own). `call_service` is POST /router/commerce/route under the
// token's grant; `list_payments` is GET /router/payments as the grant reads it; `search_services` is the public
// catalog; `get_spending` is the grant's delegation as GET /delegation/{id} shows it.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { CommerceCaller } from '../auth/caller.js';
import { searchServices } from '../catalog/services.js';
import { AppError } from '../errors/app-error.js';
import { routePaid, routerSlot } from '../router/flows/route.js';
import { listPayments } from '../router/payment-listing.js';
import { paymentOwnerOf } from '../router/principal.js';
import { parseOr400 } from '../router/parse.js';
import { CommerceRouteBody } from '../router/requests.js';
import type { RouterServices } from '../router/services.js';
import { line } from '../text.js';
import { type JsonSchema, jsonSchemaOf, outputSchemaOf } from './json-schema.js';
import { grantSpending } from './spending.js';

export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  /** MCP tool annotations: hints for the host (which calls to confirm with the human), never trusted by us. */
  readonly annotations: Readonly<Record<string, boolean | string>>;
  /** The structured result; a refusal is thrown (an AppError) and answered as an `isError` result. */
  call(services: RouterServices, caller: CommerceCaller, args: unknown): Promise<Record<string, unknown>>;
}

/** Arguments are parsed as the route parses its body: a refusal names the fields (400 BCK.ROUTER.0001 there). */
const parsed = <S extends z.ZodType>(schema: S, args: unknown): z.output<S> =>
  parseOr400(schema, args ?? {}, 'arguments');

const SearchArgs = z.object({
  query: line(200).optional(),
  limit: z.int().min(1).max(100).default(20),
});
const ServiceSummary = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  protocol: z.string().optional(),
  priceHint: z.string().optional(),
});
const SearchResult = z.object({ services: z.array(ServiceSummary) });

const searchServicesTool: McpTool = {
  name: 'search_services',
  title: 'Search paid services',
  description:
    'Searches the catalog of paid APIs this payroute can pay for (by slug, name or description). Call one with call_service and its slug.',
  inputSchema: jsonSchemaOf(SearchArgs, 'input'),
  outputSchema: outputSchemaOf(SearchResult),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(services, _caller, args) {
    const a = parsed(SearchArgs, args);
    const found = await searchServices(services.ctx, { query: a.query }, { page: 1, offset: a.limit });
    return {
      services: found.services.map((s) => ({
        slug: s.slug,
        name: s.name,
        description: s.description,
        ...(s.protocol === null ? {} : { protocol: s.protocol }),
        ...(s.priceHint === null ? {} : { priceHint: s.priceHint }),
      })),
    };
  },
};

// The commerce route's body, its requestId optional: a call without one gets a fresh one (so it is never a replay
// of another); a host that retries a call sends its own to be answered from the first.
const CallArgs = z.object({ requestId: z.unknown().optional() }).loose();
const callInput = ((): JsonSchema => {
  const schema = jsonSchemaOf(CommerceRouteBody, 'input');
  const properties = { ...(schema.properties as Record<string, unknown>) };
  delete properties.delegationId;
  return { ...schema, properties, required: [] };
})();
const CallResult = z.object({
  status: z.int(),
  body: z.unknown(),
  paid: z.boolean(),
  payment: z.looseObject({ paymentId: z.string() }).optional(),
});

const callServiceTool: McpTool = {
  name: 'call_service',
  title: 'Call a paid service',
  description:
    "Calls a service by catalog slug (or an https URL), paying its HTTP 402 from the user's capped budget, and returns its answer. Exactly one of slug and url.",
  inputSchema: callInput,
  outputSchema: outputSchemaOf(CallResult),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async call(services, caller, args) {
    const a = parsed(CallArgs, args);
    const body = parsed(CommerceRouteBody, { ...a, requestId: a.requestId ?? randomUUID() });
    const slot = routerSlot(services, caller);
    try {
      return await routePaid(services, caller, { ...body, delegationId: caller.delegationId }, slot);
    } finally {
      slot();
    }
  },
};

const SpendingResult = z.object({
  consentType: z.literal('commerce'),
  currency: z.string(),
  capCents: z.string(),
  spentCents: z.string(),
  remainingCents: z.string(),
  expiresAt: z.string(),
  organizationBudget: z.looseObject({ budgetId: z.string() }).optional(),
});

const getSpendingTool: McpTool = {
  name: 'get_spending',
  title: 'Spending left',
  description:
    'The budget the user approved for this agent: cap, spent, remaining (cents, as decimal strings), currency and expiry.',
  inputSchema: jsonSchemaOf(z.object({}), 'input'),
  outputSchema: outputSchemaOf(SpendingResult),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(services, caller) {
    return { ...(await grantSpending(services.ctx, caller)) };
  },
};

// An opaque cursor: the next page, of the listing as it stood at its first page (`before`: payments made since are
// not listed, so no page repeats a payment another page showed), in pages of the first call's `limit`.
const Cursor = z.object({
  page: z.int().min(2).max(1_000_000),
  limit: z.int().min(1).max(100),
  before: z.iso.datetime(),
});
type Cursor = z.output<typeof Cursor>;
const ListArgs = z.object({
  limit: z.int().min(1).max(100).default(20),
  cursor: line(400).optional(),
});
const ListResult = z.object({
  payments: z.array(z.looseObject({ paymentId: z.string() })),
  nextCursor: z.string().optional(),
});

function cursorOf(a: z.output<typeof ListArgs>, now: Date): Omit<Cursor, 'page'> & { page: number } {
  if (a.cursor === undefined) return { page: 1, limit: a.limit, before: now.toISOString() };
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(a.cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const r = Cursor.safeParse(decoded);
  if (!r.success)
    throw new AppError('BCK.ROUTER.0001', { details: 'arguments.cursor: not a cursor list_payments gave' });
  return r.data;
}

const listPaymentsTool: McpTool = {
  name: 'list_payments',
  title: 'Payments made',
  description:
    "This agent's own payments through payroute, newest first; while nextCursor is given, pass it back as cursor for the next page.",
  inputSchema: jsonSchemaOf(ListArgs, 'input'),
  outputSchema: outputSchemaOf(ListResult),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(services, caller, args) {
    const at = cursorOf(parsed(ListArgs, args), services.ctx.now());
    const payments = await listPayments(services.ctx, paymentOwnerOf(caller), {
      to: new Date(at.before),
      limit: at.limit,
      page: at.page,
    });
    // A full page may have a next one (at worst an empty one); a short page is the last.
    if (payments.length < at.limit) return { payments };
    const next: Cursor = { page: at.page + 1, limit: at.limit, before: at.before };
    return { payments, nextCursor: Buffer.from(JSON.stringify(next)).toString('base64url') };
  },
};

/** The tools, in the order tools/list names them. */
export const MCP_TOOLS: readonly McpTool[] = [searchServicesTool, callServiceTool, getSpendingTool, listPaymentsTool];

export const toolNamed = (name: string): McpTool | undefined => MCP_TOOLS.find((t) => t.name === name);
