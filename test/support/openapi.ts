// Reading the served API description in tests: its operations, the documented answer for a status, and the
// response schemas compiled with ajv's draft 2020-12 build (OpenAPI 3.1's dialect) from the document itself, so a
// check fails when the code and the document drift.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface OpenApiResponse {
  readonly description: string;
  readonly content?: Readonly<Record<string, { readonly schema?: unknown; readonly example?: unknown }>>;
}

export interface OpenApiOperation {
  readonly operationId: string;
  readonly summary: string;
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly parameters?: readonly { readonly name: string; readonly in: string }[];
  readonly responses: Readonly<Record<string, OpenApiResponse>>;
  readonly 'x-error-codes'?: readonly string[];
}

export interface OpenApi {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>>;
  readonly components: { readonly schemas: Readonly<Record<string, unknown>> };
}

export function operationsOf(doc: OpenApi): { method: string; path: string; operation: OpenApiOperation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
  );
}

/** The documented answer for `status`: the operation's own, else its `default`. */
export function responseFor(
  op: OpenApiOperation,
  status: number,
): { response: OpenApiResponse; explicit: boolean } | undefined {
  const own = op.responses[String(status)];
  if (own !== undefined) return { response: own, explicit: true };
  const fallback = op.responses.default;
  return fallback === undefined ? undefined : { response: fallback, explicit: false };
}

const DOCUMENT_ID = 'urn:payroute:openapi';

/**
 * A checker of JSON bodies against the document: `validate(method, path, status, body)` gives the ajv errors (none:
 * valid), or names what the document lacks (no such operation, no answer for the status, no JSON content).
 */
export function compileSchemas(doc: OpenApi) {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  // zod writes a `pattern` beside each `format`; the formats are checked too (ajv-formats is CommonJS: its
  // plugin is the module's `default`).
  addFormats.default(ajv);
  ajv.addKeyword('components');
  ajv.addSchema({ $id: DOCUMENT_ID, components: doc.components });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (method: string, path: string, status: number, body: unknown): string[] => {
    const op = doc.paths[path]?.[method];
    if (op === undefined) return [`no operation ${method} ${path}`];
    const documented = responseFor(op, status);
    if (documented === undefined) return [`${method} ${path}: no answer documented for ${status}`];
    const schema = documented.response.content?.['application/json']?.schema;
    if (schema === undefined) return [`${method} ${path}: the ${status} answer has no JSON content`];
    const ref = (schema as { $ref?: unknown }).$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/components/schemas/'))
      return [`${method} ${path}: the ${status} answer's schema is not a component`];
    let check = compiled.get(ref);
    if (check === undefined) {
      check = ajv.compile({ $ref: `${DOCUMENT_ID}${ref}` });
      compiled.set(ref, check);
    }
    if (check(body)) return [];
    return (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  };
}
