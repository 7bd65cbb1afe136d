// Request schemas of the agent and plan registry. Types are inferred from
// the schemas and share their names. Every string is bounded so a hostile body cannot bloat rows or responses, and
// built on text.ts, so control characters and unpaired surrogates are a 400 naming the field. That matters beyond
// tidiness: the registry writes through MikroORM's entity queries, which format values into the SQL text, and a NUL
// there failed the statement (a 500); PostgreSQL refuses NUL in text even bound.
//
// Decisions the interface leaves open:
// - Create bodies strip unknown keys (SDKs send extra fields such as contract addresses); update bodies are
//   strict, because an update whose only key is a typo would otherwise "succeed" and change nothing.
// - Endpoints are objects of one or more `VERB: url` pairs, verbs in upper case; URLs are absolute http(s)
//   without credentials; `:name` path segments are kept as written (they match any segment at initialize).
// - Nested priceConfig / creditsConfig are replaced whole on update and validated whole.
import { isAddress } from 'viem';
import { z } from 'zod';
import { EvmAddress } from '../address.js';
import { Amount, MAX_INT64, PositiveAmount, sum } from '../money.js';
import { line, text } from '../text.js';

export const LIMITS = {
  name: 200,
  description: 5000,
  tags: 50,
  tag: 100,
  url: 2048,
  endpoints: 50,
  receivers: 10,
} as const;

export const HTTP_VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

// Printable ASCII only (RFC 3986; international names in punycode, other characters percent-encoded): `new URL`
// would silently trim or re-encode whitespace, controls and Unicode, and the stored URL is compared byte for byte
// at initialize.
const URL_CHARS = /^[!-~]+$/;

function isHttpUrl(value: string): boolean {
  if (!URL_CHARS.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === ''
  );
}

export const HttpUrl = line(LIMITS.url).refine(
  isHttpUrl,
  'must be an absolute http(s) URL without credentials or whitespace',
);

export const Name = line(LIMITS.name, { trim: true }).min(1, 'must not be empty');
export const Description = text(LIMITS.description);
export const Tags = z.array(line(LIMITS.tag, { trim: true }).min(1, 'must not be empty')).max(LIMITS.tags);

export const Endpoint = z
  .partialRecord(z.enum(HTTP_VERBS), HttpUrl)
  .refine((e) => Object.keys(e).length > 0, 'must map at least one HTTP verb to a URL')
  .transform((e) => e as Record<string, string>);
export const Endpoints = z.array(Endpoint).min(1).max(LIMITS.endpoints);

// A mixed-case address carries an EIP-55 checksum; a wrong one is almost always a typo, and money sent to a
// typo'd receiver is lost, so it is refused rather than silently normalised. One-case addresses carry none.
const HEX_ONE_CASE = /^0x([0-9a-f]{40}|[0-9A-F]{40})$/;
export const PayableAddress = line(42)
  .refine(
    (v) => HEX_ONE_CASE.test(v) || isAddress(v, { strict: true }),
    'must be an EVM address with a valid EIP-55 checksum',
  )
  .pipe(EvmAddress);

export const PriceConfig = z
  .object({
    priceType: z.literal('FIXED_PRICE'),
    tokenAddress: PayableAddress,
    amounts: z.array(Amount).min(1).max(LIMITS.receivers),
    receivers: z.array(PayableAddress).min(1).max(LIMITS.receivers),
  })
  .superRefine((p, ctx) => {
    if (p.amounts.length !== p.receivers.length) {
      ctx.addIssue({ code: 'custom', path: ['receivers'], message: 'must have one receiver per amount' });
    }
    // The price is paid as one movement per receiver, but its total must still be one representable amount.
    // zod still runs this refinement when an element failed, with the raw input in its place: sum only bigints.
    if (p.amounts.every((a) => typeof a === 'bigint') && sum(p.amounts) > MAX_INT64) {
      ctx.addIssue({ code: 'custom', path: ['amounts'], message: 'total does not fit in a 64-bit integer' });
    }
  });
export type PriceConfig = z.output<typeof PriceConfig>;

export const CreditsConfig = z
  .object({
    creditsType: z.literal('FIXED'),
    amount: PositiveAmount,
    minAmount: PositiveAmount,
  })
  .superRefine((c, ctx) => {
    if (typeof c.minAmount === 'bigint' && typeof c.amount === 'bigint' && c.minAmount > c.amount) {
      ctx.addIssue({ code: 'custom', path: ['minAmount'], message: 'must not exceed amount' });
    }
  });
export type CreditsConfig = z.output<typeof CreditsConfig>;

export const AccessLimit = z.literal('credits');

const agentFields = {
  name: Name,
  description: Description,
  tags: Tags,
  endpoints: Endpoints,
  agentDefinitionUrl: HttpUrl,
};

export const AgentInput = z.object(agentFields);
export type AgentInput = z.output<typeof AgentInput>;

const atLeastOne = (v: object): boolean => Object.keys(v).length > 0;

export const AgentUpdate = z.strictObject(agentFields).partial().refine(atLeastOne, 'must change at least one field');
export type AgentUpdate = z.output<typeof AgentUpdate>;

const planFields = {
  name: Name,
  description: Description,
  priceConfig: PriceConfig,
  creditsConfig: CreditsConfig,
};

export const PlanInput = z.object({ ...planFields, accessLimit: AccessLimit.default('credits') });
export type PlanInput = z.output<typeof PlanInput>;

export const PlanUpdate = z.strictObject(planFields).partial().refine(atLeastOne, 'must change at least one field');
export type PlanUpdate = z.output<typeof PlanUpdate>;

/** POST /protocol/agents/plans: an agent and a plan created together and attached. */
export const AgentWithPlanInput = z.object({
  agentMetadata: z.object({ name: Name, description: Description, tags: Tags }),
  agentApi: z.object({ endpoints: Endpoints, agentDefinitionUrl: HttpUrl }),
  planMetadata: z.object({ name: Name, description: Description }),
  priceConfig: PriceConfig,
  creditsConfig: CreditsConfig,
  accessLimit: AccessLimit.default('credits'),
});
export type AgentWithPlanInput = z.output<typeof AgentWithPlanInput>;

/** `true` lists, `false` unlists (path segment of `.../list/{activate}`). */
export const Activate = z.enum(['true', 'false']).transform((v) => v === 'true');

// Plan ids are the integer primary key (a 32-bit `int` column on PostgreSQL): anything else names no plan.
const PLAN_ID = /^(0|[1-9][0-9]{0,9})$/;
const MAX_INT32 = 2_147_483_647;

/** The integer plan id of a path segment or body string, or undefined when it cannot name a plan. */
export function planIdOf(value: string): number | undefined {
  if (!PLAN_ID.test(value)) return undefined;
  const n = Number(value);
  return n <= MAX_INT32 ? n : undefined;
}

const AGENT_ID = /^did:payroute:(sandbox|live):[0-9a-f]{32}$/;

/** Whether a string has the form of an agent id (anything else names no agent). */
export const isAgentId = (value: string): boolean => AGENT_ID.test(value);
