// The API description of the service's own routes: health, discovery and this reference.
import type { z } from 'zod';
import { type Operations, html, json } from './operation.js';
import { AuthorizationServer, Jwks, ProtectedResource } from './responses/oauth.js';
import { Health, OpenApiDocument, Readiness } from './responses/service.js';

/** Discovery documents take no parameters; an unknown query parameter is ignored. */
const document = (summary: string, schema: z.ZodType, what: string) => ({
  summary,
  tags: ['Discovery'] as const,
  responses: { 200: json(what, schema) },
  codes: [],
});

export const SERVICE_OPERATIONS: Operations = {
  'GET /healthz': {
    summary: 'Health check',
    description:
      'Served by both processes: on the public port the proxy answers (`service: proxy`), on the admin port the admin process.',
    tags: ['Service'],
    responses: { 200: json('The process is up.', Health, { status: 'ok', service: 'proxy' }) },
    codes: [],
  },
  'GET /readyz': {
    summary: 'Readiness check',
    description:
      'Served by both processes, each for itself: 200 while the process serves and its database answers with every migration applied; 503 while it starts or drains (after SIGTERM), when the database does not answer within 2 s, when migrations are pending, or when the data is no longer sealed with the secrets key of this process (`secrets_key_mismatch`: the key was rotated while it ran). `/healthz` stays liveness.',
    tags: ['Service'],
    responses: {
      200: json('Ready for traffic.', Readiness, { status: 'ready', service: 'proxy' }),
      503: json('Not ready: send traffic elsewhere.', Readiness, { status: 'draining', service: 'proxy' }),
    },
    codes: [],
  },
  'GET /api/v1/openapi.json': {
    summary: 'This API description',
    description: 'OpenAPI 3.1, generated at start from the route tables of both processes and their zod schemas.',
    tags: ['Service'],
    responses: { 200: json('The document.', OpenApiDocument) },
    codes: [],
  },
  'GET /docs': {
    summary: 'API reference page',
    description:
      'A page rendering this document (RapiDoc, served by this service: the page loads nothing from elsewhere).',
    tags: ['Service'],
    responses: { 200: html('The reference page.') },
    codes: [],
  },
  'GET /docs/rapidoc-min.js': {
    summary: "The reference page's renderer",
    tags: ['Service'],
    responses: { 200: { description: "RapiDoc's bundle.", content: [{ type: 'text/javascript' }] } },
    codes: [],
  },
  'GET /.well-known/jwks.json': document(
    'Signing keys (JWKS)',
    Jwks,
    "The public keys of this service's ES256 signatures.",
  ),
  'GET /.well-known/oauth-authorization-server': document(
    'OAuth authorization server metadata',
    AuthorizationServer,
    'Where connectors send the human for consent and exchange codes for tokens (RFC 8414).',
  ),
  'GET /.well-known/oauth-protected-resource': document(
    'OAuth protected resource metadata',
    ProtectedResource,
    "The API as an OAuth protected resource (RFC 9728); a 401's WWW-Authenticate points here.",
  ),
  'GET /.well-known/oauth-protected-resource/api/v1': document(
    'OAuth protected resource metadata (RFC 9728 §3.1 location)',
    ProtectedResource,
    'The same document, at the location RFC 9728 §3.1 derives for the resource `{host_url}/api/v1`.',
  ),
  'GET /.well-known/oauth-protected-resource/mcp': document(
    'OAuth protected resource metadata of the MCP endpoint',
    ProtectedResource,
    'The MCP endpoint `{host_url}/mcp` as an OAuth protected resource (RFC 9728 §3.1 location): its tokens are asked for with `resource={host_url}/mcp` (RFC 8707).',
  ),
};
