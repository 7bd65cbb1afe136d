// The API description (GET /api/v1/openapi.json, public, through the proxy): it lists exactly the routes of both
// processes' tables (enumerated here by test/support/declared-routes.ts, not by the generator), each with the
// security and the auth error codes its access declaration gives, and it is a valid OpenAPI 3.1 document.
import { Validator } from '@seriousme/openapi-schema-validator';
import test from 'ava';
import { buildAdminApp } from '../../admin/app.js';
import { OPERATIONS } from '../../admin/openapi/operations.js';
import { listAdminRoutes, listProxyRoutes } from '../../admin/openapi/route-listing.js';
import { catalogue } from '../../shared/errors/catalogue.js';
import { authorizationServerMetadata } from '../../shared/oauth/metadata.js';
import { buildOpenApiDocument, openApiPath } from '../../admin/openapi/document.js';
import { type Declared, declaredRoutes, expectedFor } from '../support/declared-routes.js';
import { type OpenApi, compileSchemas, operationsOf } from '../support/openapi.js';
import { type Stack, startStack } from '../support/stack.js';

let stack: Stack | undefined;
const s = (): Stack => {
  if (stack === undefined) throw new Error('stack not started');
  return stack;
};
test.before(async () => {
  stack = await startStack('sqlite');
});
test.after.always(async () => {
  await stack?.stop();
});

async function served(): Promise<OpenApi> {
  const r = await fetch(`${s().proxyUrl}/api/v1/openapi.json`);
  if (r.status !== 200) throw new Error(`GET /api/v1/openapi.json: ${r.status}`);
  return (await r.json()) as OpenApi;
}

/** The OpenAPI methods a declared route is documented under (`*`: every method OpenAPI names but TRACE). */
const methodsOf = (r: Declared): string[] =>
  r.method === '*' ? ['delete', 'get', 'head', 'options', 'patch', 'post', 'put'] : [r.method.toLowerCase()];

test('the document is public, JSON, on the proxy (the front door) and the admin port alike', async (t) => {
  for (const base of [s().proxyUrl, s().adminUrl]) {
    const r = await fetch(`${base}/api/v1/openapi.json`);
    t.is(r.status, 200);
    t.is(r.headers.get('content-type'), 'application/json; charset=utf-8');
    const doc = (await r.json()) as OpenApi;
    t.is(doc.openapi, '3.1.0');
  }
});

test('every route of both route tables is an operation of the document, and the document has no other', async (t) => {
  const doc = await served();
  const routes = await declaredRoutes(s().ctx);
  const expected = new Set<string>();
  for (const r of routes) for (const m of methodsOf(r)) expected.add(`${m} ${openApiPath(r.path)}`);
  const documented = operationsOf(doc).map((o) => `${o.method} ${o.path}`);
  t.is(new Set(documented).size, documented.length, 'no operation twice');
  const ids = operationsOf(doc).map((o) => o.operation.operationId);
  t.is(new Set(ids).size, ids.length, 'operationIds are unique (OAS 3.1 §4.8.10)');
  t.deepEqual([...documented].sort(), [...expected].sort());
  t.true(routes.filter((r) => r.process === 'proxy').length >= 7 && routes.length >= 90, `${routes.length} routes`);
});

test('built in-process from the same tables, the registry describes every route and only those', async (t) => {
  const { routes } = buildAdminApp(s().ctx);
  const built = buildOpenApiDocument([...listAdminRoutes(routes), ...listProxyRoutes()], OPERATIONS, {
    version: '0.0.0',
    oauth: authorizationServerMetadata(s().ctx.config),
  });
  t.deepEqual(built.problems, []);
});

test('each operation states the access its route declares, and the codes the declaration answers', async (t) => {
  const doc = await served();
  const ops = new Map(operationsOf(doc).map((o) => [`${o.method} ${o.path}`, o.operation]));
  for (const r of await declaredRoutes(s().ctx)) {
    for (const m of methodsOf(r)) {
      const op = ops.get(`${m} ${openApiPath(r.path)}`);
      if (op === undefined) continue; // the test above names it
      const where = `${r.process} ${m} ${r.path}`;
      const security = r.public ? [] : r.accepts.map((k) => (k === 'apiKey' ? { apiKey: [] } : { oauth: [k] }));
      t.deepEqual(op.security, security, where);
      const codes = op['x-error-codes'] ?? [];
      t.true(codes.length > 0 && codes.every((c) => c in catalogue), where);
      if (r.public) continue;
      // The OAuth endpoints that act for a signed-in human name their 401 BCK.OAUTH.0007 (route-access.test.ts).
      t.true(codes.includes(r.path.startsWith('/oauth/') ? 'BCK.OAUTH.0007' : 'BCK.AUTH.0001'), `${where}: 401`);
      for (const kind of ['apiKey', 'commerce', 'account_access']) {
        const want = expectedFor(r, kind);
        if (!want.reaches) t.true(codes.includes(want.code), `${where}: ${kind} -> ${want.code}`);
      }
      // Every code has a response of its status.
      for (const c of codes) t.truthy(op.responses[String(catalogue[c as keyof typeof catalogue].httpStatus)], c);
    }
  }
});

test('the money-moving POSTs declared idempotent take an Idempotency-Key header', async (t) => {
  const doc = await served();
  const { routes } = buildAdminApp(s().ctx);
  const idempotent = routes.filter((r) => r.idempotent).map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
  t.is(idempotent.length, 7);
  for (const o of operationsOf(doc)) {
    const takesKey = (o.operation.parameters ?? []).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
    t.is(takesKey, idempotent.includes(`${o.method} ${o.path}`), `${o.method} ${o.path}`);
  }
});

test('the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', async (t) => {
  const validator = new Validator();
  const result = await validator.validate((await served()) as unknown as Record<string, unknown>);
  t.deepEqual(result.errors ?? [], []);
  t.true(result.valid);
  t.is(validator.version, '3.1');
});

test('every example validates: request bodies by the zod schema the route parses with, responses by the document', async (t) => {
  const doc = await served();
  const validate = compileSchemas(doc);
  let checked = 0;
  for (const [key, spec] of Object.entries(OPERATIONS)) {
    if (spec.request?.body !== undefined && spec.request.example !== undefined) {
      const r = spec.request.body.safeParse(spec.request.example);
      t.true(r.success, `${key}: ${r.error?.message ?? ''}`);
      checked++;
    }
    for (const [status, response] of Object.entries(spec.responses)) {
      for (const c of response.content) {
        if (c.type !== 'application/json' || c.example === undefined) continue;
        const [method = '', path = ''] = key.split(' ');
        const errors = validate(method.toLowerCase(), openApiPath(path), Number(status), c.example);
        t.deepEqual(errors, [], `${key} ${status}`);
        checked++;
      }
    }
  }
  t.true(checked > 30, `${checked} examples`);
});
