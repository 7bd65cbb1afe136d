// One entry of the operation registry: what the API description says about a route beyond what its table declares
// (method, path, access, idempotency and error dialect come from the table). Request schemas are the zod schemas
// the route parses with; response schemas are the named ones of ./responses; `codes` are the catalogue codes the
// route's own work can answer (the access declaration adds its auth codes, document.ts the process-wide ones).
import type { z } from 'zod';
import type { ErrorCode } from '../../shared/errors/catalogue.js';

export const TAGS = {
  Service: 'Health checks and this API description.',
  Discovery: 'The signing keys and the OAuth discovery documents (RFC 8414, RFC 9728).',
  OAuth: "The OAuth authorization server: the human's consent endpoints and the connector's token endpoints.",
  Pages: 'The consent and device pages (HTML, for a browser).',
  Agents: 'The agent registry.',
  Plans: "Plans: what an agent's credits cost.",
  Credits: 'Orders, mints, balances and burns of plan credits; access tokens and agent requests.',
  Delegations: 'Spending delegations: capped, expiring authorities to spend for the user.',
  x402: "x402 delegated permissions: tokens an agent verifies and settles against the subscriber's credits.",
  Organizations: 'Organizations: members, groups, wallets, cards, budgets and the activity log.',
  Router: "The payment router (served by the proxy process): pays merchants' 402s from a delegation.",
  Catalog: 'The catalog of services the router can call by slug: public, never showing an upstream.',
} as const;

export type Tag = keyof typeof TAGS;

/** A response body of one media type. */
export type Content =
  | { readonly type: 'application/json'; readonly schema: z.ZodType; readonly example?: unknown }
  | { readonly type: 'text/html' | 'text/csv' | 'text/javascript' | '*/*' };

export interface ResponseSpec {
  readonly description: string;
  /** None for an answer without a body. */
  readonly content: readonly Content[];
  /** Response headers worth naming, with what they say. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RequestSpec {
  /** The JSON body (a route that reads forms takes the same fields as application/x-www-form-urlencoded). */
  readonly body?: z.ZodType;
  /** A valid body, shown in the reference. */
  readonly example?: unknown;
  /** A body relayed as bytes, never parsed (the streaming proxy). */
  readonly relayedBody?: true;
  readonly query?: z.ZodType;
  /** Path parameters the route checks the form of; any other is a plain string. */
  readonly path?: Readonly<Record<string, z.ZodType>>;
  /** Request headers the route reads (an object schema keyed by lower-case name). */
  readonly headers?: z.ZodType;
}

export interface OperationSpec {
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly [Tag, ...Tag[]];
  readonly request?: RequestSpec;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Catalogue codes the route's own work answers (validation, not found, conflicts, payment refusals). */
  readonly codes: readonly ErrorCode[];
}

/** The registry: `METHOD template` as the route tables spell it -> what the document says of it. */
export type Operations = Readonly<Record<string, OperationSpec>>;

export const json = (description: string, schema: z.ZodType, example?: unknown): ResponseSpec => ({
  description,
  content: [
    example === undefined ? { type: 'application/json', schema } : { type: 'application/json', schema, example },
  ],
});

export const html = (description: string): ResponseSpec => ({ description, content: [{ type: 'text/html' }] });

export const empty = (description: string): ResponseSpec => ({ description, content: [] });

/** RFC 9110 §15.4.4: after a form, the browser GETs `Location` (the body is a short page linking to it). */
export const seeOther = (description: string): ResponseSpec => ({
  description,
  content: [{ type: 'text/html' }],
  headers: { location: 'Where the browser goes next.' },
});
