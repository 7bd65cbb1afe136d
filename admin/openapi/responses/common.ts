// The pieces every response schema is built from, and the registry that names them: a schema registered with
// `named` becomes `#/components/schemas/<id>` of the API description, and every JSON response of the document
// must be one of them (document.ts refuses an unnamed one). Response schemas describe what the services put on
// the wire, so they are plain (no transforms) and strict: an object with a field the document does not name fails
// the contract test (test/http/openapi-contract.test.ts) instead of drifting silently.
import { z } from 'zod';
import { type ErrorCode, catalogue } from '../../../shared/errors/catalogue.js';
import { PROTOCOL_ERROR_CODES } from '../../../shared/oauth/protocol-error.js';

/** The named response schemas of the document (ids only: descriptions travel with the schemas themselves). */
export const components = z.registry<{ id: string }>();

/** `schema` as the component `id`, described by `description`. */
export function named<S extends z.ZodType>(id: string, schema: S, description: string): S {
  const described = schema.meta({ description });
  components.add(described, { id });
  return described;
}

/** `T` with its literal types widened (`'Active'` to string) and every part read-only. */
type Widened<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? readonly Widened<U>[]
        : T extends object
          ? { readonly [K in keyof T]: Widened<T[K]> }
          : T;

/**
 * Compiles only when the service's result type `T` fits the documented schema `S`: every field the document
 * promises exists in `T`, with the same kind of value (a service typing a status as `string` fits a documented
 * enum: the contract test checks the values). The reverse, a field the document does not name, is what the strict
 * schemas and the contract test catch.
 */
export type Fits<S extends z.ZodType, T extends Widened<z.output<S>>> = T;

/** Amounts, counts of credits and cents on the wire: decimal strings, never JSON numbers (README "Decisions"). */
export const Decimal = named(
  'Decimal',
  z.string().regex(/^(0|[1-9][0-9]*)$/),
  'A non-negative integer as a decimal string (amounts in atomic units, cents, credits): never a JSON number.',
);
/** An EVM address (EIP-55 checksum case as stored, lower case where the caller's spelling is kept). */
export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
/** ISO 8601 in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const Timestamp = named('Timestamp', z.iso.datetime(), 'A date and time, ISO 8601 in UTC.');
/** A CAIP-2 chain id, `eip155:<chain id>`. */
export const Network = z.string().regex(/^eip155:[0-9]+$/);
/** The ids of rows: UUIDs (random or time-ordered). */
export const Id = z.uuid();

/** `{ success: true }`: the answer of a change that returns nothing else. */
export const Success = named('Success', z.object({ success: z.literal(true) }), 'The change was made.');

/** A page of a registry-style list: `offset` is the number of results per page (the interface's name). */
export const pageOf = <K extends string, S extends z.ZodType>(key: K, item: S) =>
  z.object({
    total: z.number().int().nonnegative(),
    page: z.number().int().positive(),
    offset: z.number().int().positive(),
    ...({ [key]: z.array(item) } as Record<K, z.ZodArray<S>>),
  });

const CODES = Object.keys(catalogue) as [ErrorCode, ...ErrorCode[]];

/**
 * The error envelope every BCK error carries (shared/errors/app-error.ts `toEnvelope`): loose, because an error may
 * add top-level fields (a duplicate requestId's original `paymentId`).
 */
export const ErrorEnvelope = named(
  'ErrorEnvelope',
  z.looseObject({
    code: z.enum(CODES),
    httpStatus: z.number().int().min(400).max(599),
    message: z.string(),
    details: z.string(),
    error: z.string(),
    hint: z.string(),
    docsUrl: z.string(),
    category: z.enum(['auth', 'integration', 'validation', 'payment', 'not_found', 'conflict', 'internal']),
    retryable: z.boolean(),
    correlationId: z.string(),
    uuid: Id,
    date: Timestamp,
    /** The error's parameters, JSON-encoded. */
    params: z.string(),
  }),
  'Every error of the BCK protocol: `code` names the catalogue entry (docs/errors.md), `details` says what went wrong with this request, `params` holds its parameters as a JSON string.',
);

/** RFC 6749 §5.2's error body, spoken by the token, device authorization and revocation endpoints. */
export const OAuthError = named(
  'OAuthError',
  z.object({
    error: z.enum(PROTOCOL_ERROR_CODES),
    error_description: z.string(),
  }),
  'An OAuth error (RFC 6749 §5.2, RFC 8628 §3.5): a connector library reads `error`.',
);
