// The OpenAPI 3.1 document, built from the route tables of both processes (each route's method, path, access
// declaration, idempotency and error dialect) and the operation registry (what each route reads and answers, as zod
// schemas). Every route of the tables becomes an operation, documented or not, and nothing else does: a route the
// registry does not know, or a registry entry no table has, is reported in `problems` (a test keeps it empty).
import { catalogue } from '../../shared/errors/catalogue.js';
import type { ErrorCode } from '../../shared/errors/catalogue.js';
import type { AuthorizationServerMetadata } from '../../shared/oauth/metadata.js';
import { type JsonSchema, componentId, componentSchemas, inputSchema } from './json-schema.js';
import { type ListedRoute, routeKey } from './listed-route.js';
import { type Content, type OperationSpec, type Operations, type ResponseSpec, TAGS } from './operation.js';
import { authCodesOf, securityOf, securitySchemes } from './security.js';

export interface DocumentSite {
  /** The version of the service (package.json). */
  readonly version: string;
  /** Where the OAuth flows start and end (the discovery document's endpoints). */
  readonly oauth: AuthorizationServerMetadata;
}

export interface BuiltDocument {
  readonly document: Record<string, unknown>;
  /** What keeps the document from describing the tables exactly; empty when it does. */
  readonly problems: readonly string[];
}

/** The methods a `*` route is documented under (OpenAPI has no "any method"; TRACE is refused upstream). */
const ANY_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** `:name` -> `{name}` (OAS 3.1 §4.8.2 path templating). */
export const openApiPath = (template: string): string => template.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const paramsOf = (template: string): string[] => [...template.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '');

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/**
 * An operationId from the method and the whole path (unique as the pair is: `/proxy` and `/api/v1/proxy` are two
 * routes): `GET /api/v1/protocol/plans/:planId` -> getApiV1ProtocolPlansPlanId.
 */
function operationId(method: string, template: string): string {
  const words = template.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join('');
}

/** The codes of the process, not of the route: the body reader's, and what no route can rule out. */
function processCodes(route: ListedRoute, spec: OperationSpec | undefined): ErrorCode[] {
  // Any route that reads or writes the database can meet it unavailable (503, retryable, with Retry-After).
  const codes: ErrorCode[] = ['BCK.HTTP.0500', 'BCK.DATABASE.0001'];
  const body = spec?.request?.body !== undefined || spec?.request?.relayedBody === true;
  if (body) codes.push('BCK.HTTP.0400', 'BCK.HTTP.0408', 'BCK.HTTP.0413');
  // The admin process's body parser refuses other media types (415), and the proxy answers 502 when the admin
  // process, which serves the route behind it, cannot be reached.
  if (route.process === 'admin') {
    if (body) codes.push('BCK.HTTP.0415');
    codes.push('BCK.HTTP.0502');
  }
  if (route.idempotent) codes.push('BCK.IDEMPOTENCY.0001', 'BCK.IDEMPOTENCY.0002');
  return codes;
}

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function describeCodes(codes: readonly ErrorCode[]): string {
  return codes.map((c) => `\`${c}\` ${catalogue[c].message}`).join('; ');
}

function contentOf(content: readonly Content[], where: string, problems: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of content) {
    if (c.type !== 'application/json') {
      out[c.type] = { schema: c.type === 'text/html' || c.type === 'text/csv' ? { type: 'string' } : {} };
      continue;
    }
    const id = componentId(c.schema);
    if (id === undefined) problems.push(`${where}: a response schema that is not a named component`);
    const schema = id === undefined ? {} : ref(id);
    out[c.type] = c.example === undefined ? { schema } : { schema, example: c.example };
  }
  return out;
}

function responseOf(r: ResponseSpec, where: string, problems: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description };
  if (r.content.length > 0) out.content = contentOf(r.content, where, problems);
  if (r.headers !== undefined) {
    out.headers = Object.fromEntries(
      Object.entries(r.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
    );
  }
  return out;
}

/** The error answers of a route: one response per status its codes have, in the route's error dialect. */
function errorResponses(route: ListedRoute, codes: readonly ErrorCode[]): Record<string, unknown> {
  const envelope = { 'application/json': { schema: ref('ErrorEnvelope') } };
  const statuses = new Map<number, ErrorCode[]>();
  for (const c of codes) statuses.set(catalogue[c].httpStatus, [...(statuses.get(catalogue[c].httpStatus) ?? []), c]);
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...statuses].sort(([a], [b]) => a - b)) {
    // The pages answer their client errors as a page.
    const content =
      route.errors === 'page' && status < 500 ? { 'text/html': { schema: { type: 'string' } } } : envelope;
    const response: Record<string, unknown> = { description: describeCodes(list), content };
    if (status === 401) {
      response.headers = {
        'www-authenticate': {
          description:
            'RFC 6750 §3: `Bearer resource_metadata=...` (RFC 9728), with `error="invalid_token"` for a bad access token.',
          schema: { type: 'string' },
        },
      };
    }
    out[String(status)] = response;
  }
  // RFC 6749's endpoints answer their client errors as `{error, error_description}` (a body they cannot read too).
  if (route.errors === 'oauth') {
    out['400'] = {
      description:
        "RFC 6749 §5.2: `invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`; the device flow's `authorization_pending`, `slow_down`, `access_denied`, `expired_token` (RFC 8628 §3.5).",
      content: { 'application/json': { schema: ref('OAuthError') } },
    };
    out['401'] = {
      description: 'RFC 6749 §5.2: `invalid_client`, an unknown or disabled client.',
      content: { 'application/json': { schema: ref('OAuthError') } },
    };
  }
  out.default = { description: 'Any other error, as the BCK envelope.', content: envelope };
  return out;
}

function parametersOf(route: ListedRoute, spec: OperationSpec | undefined, where: string, problems: string[]) {
  const req = spec?.request;
  const path = req?.path ?? {};
  const names = paramsOf(route.path);
  for (const name of Object.keys(path)) if (!names.includes(name)) problems.push(`${where}: no path parameter ${name}`);
  const params: Record<string, unknown>[] = names.map((name) => {
    const schema = path[name];
    return {
      name,
      in: 'path',
      required: true,
      schema: schema === undefined ? { type: 'string' } : inputSchema(schema),
    };
  });
  const objectParams = (place: 'query' | 'header', schema: JsonSchema) => {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required ?? []) as string[]);
    for (const [name, s] of Object.entries(properties))
      params.push({ name, in: place, required: required.has(name), schema: s });
  };
  if (req?.query !== undefined) objectParams('query', inputSchema(req.query));
  if (req?.headers !== undefined) objectParams('header', inputSchema(req.headers));
  if (route.idempotent) {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the request safe to retry: the first answer (2xx or 4xx) is stored and a repeat gets it back with `Idempotent-Replayed: true`; another request with the key is 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  return params;
}

function requestBodyOf(route: ListedRoute, spec: OperationSpec | undefined): Record<string, unknown> | undefined {
  const req = spec?.request;
  if (req?.relayedBody === true) {
    return { required: false, description: 'Relayed to the merchant as it is.', content: { '*/*': { schema: {} } } };
  }
  if (req?.body === undefined) return undefined;
  const schema = inputSchema(req.body);
  const json = req.example === undefined ? { schema } : { schema, example: req.example };
  const content: Record<string, unknown> = { 'application/json': json };
  if (route.bodies === 'form-or-json') content['application/x-www-form-urlencoded'] = { schema };
  return { required: true, content };
}

function operationOf(route: ListedRoute, method: string, spec: OperationSpec | undefined, problems: string[]) {
  const where = routeKey(route);
  const all = new Set([...authCodesOf(route.access), ...(spec?.codes ?? []), ...processCodes(route, spec)]);
  // RFC 6749's endpoints turn a 400 or 415 of the body reader into `invalid_request` (admin/http/oauth-protocol.ts).
  const spoken = [...all].filter((c) => route.errors !== 'oauth' || ![400, 415].includes(catalogue[c].httpStatus));
  const codes = spoken.sort(byCode);
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(spec?.responses ?? {})) responses[status] = responseOf(r, where, problems);
  // A documented answer of the route itself (the sign-in page's 401) takes precedence over the generic one.
  for (const [status, r] of Object.entries(errorResponses(route, codes))) responses[status] ??= r;
  const op: Record<string, unknown> = {
    operationId: operationId(method, route.path),
    summary: spec?.summary ?? where,
    tags: [...(spec?.tags ?? [])],
  };
  if (spec?.description !== undefined) op.description = spec.description;
  const parameters = parametersOf(route, spec, where, problems);
  if (parameters.length > 0) op.parameters = parameters;
  const body = requestBodyOf(route, spec);
  if (body !== undefined) op.requestBody = body;
  op.responses = responses;
  op.security = securityOf(route.access);
  op['x-error-codes'] = codes;
  return op;
}

/**
 * The document of `routes` (both processes' tables; a path and method served by both, `/healthz`, is one
 * operation) described by `operations`.
 */
export function buildOpenApiDocument(
  routes: readonly ListedRoute[],
  operations: Operations,
  site: DocumentSite,
): BuiltDocument {
  const problems: string[] = [];
  const unique = new Map<string, ListedRoute>();
  // A route of both processes (`GET /healthz`) is the proxy's on the front door the document describes.
  for (const r of routes) if (!unique.has(routeKey(r)) || r.process === 'proxy') unique.set(routeKey(r), r);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, route] of unique) {
    const spec = operations[key];
    if (spec === undefined) problems.push(`${key}: a route with no entry in the operation registry`);
    const path = openApiPath(route.path);
    const item = paths[path] ?? {};
    paths[path] = item;
    const methods = route.method === '*' ? ANY_METHODS : [route.method.toLowerCase()];
    for (const m of methods) item[m] = operationOf(route, m, spec, problems);
  }
  for (const key of Object.keys(operations)) {
    if (!unique.has(key)) problems.push(`${key}: a registry entry no route table has`);
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'payroute API',
      version: site.version,
      summary:
        'Payments for AI agents: plans and credits, delegations, x402 permissions, the payment router, OAuth for connectors, organizations.',
      description:
        'Generated from the route tables of the proxy (the public front door) and the admin process, and from the zod schemas their routes validate with. Errors are the BCK envelope (`ErrorEnvelope`; `x-error-codes` lists the codes each operation can answer, docs/errors.md describes each), except where an operation says otherwise. Amounts are decimal strings. The MCP endpoint, `/mcp` on the same host, is not an operation here: it speaks JSON-RPC over the MCP Streamable HTTP transport (POST messages, GET the server-to-client stream, DELETE a session; protocol versions 2025-11-25 and 2025-06-18), takes only OAuth access tokens issued for the resource `{host_url}/mcp` (RFC 8707; its metadata at `/.well-known/oauth-protected-resource/mcp`), and offers the tools search_services, call_service, get_spending and list_payments (README, "Using payroute from an MCP host").',
    },
    servers: [{ url: '/', description: "This service (the proxy's address)." }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: { schemas: componentSchemas(), securitySchemes: securitySchemes(site.oauth) },
  };
  return { document, problems };
}
