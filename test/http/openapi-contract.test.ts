// The API description against the running service: real calls through the proxy (the front door), each answer's
// status looked up in the SERVED document and its JSON body validated with ajv (draft 2020-12) against the schema
// the document gives for that status. One successful call per route (the valid samples of
// test/support/endpoints/, which cover every route of both tables), every non-public route without a credential,
// and a set of refusals whose codes must be among the operation's `x-error-codes`. On SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { OAuthDeviceRate } from '../../shared/db/entities/index.js';
import { createClient } from '../../shared/oauth/clients.js';
import { openApiPath } from '../../admin/openapi/document.js';
import { declaredRoutes } from '../support/declared-routes.js';
import { ENDPOINTS, type EndpointFixtures, type SampleRequest } from '../support/endpoints/index.js';
import { suiteEndpointFixtures } from '../support/endpoints/suite-fixtures.js';
import { forEachDb } from '../support/matrix.js';
import { type OpenApi, compileSchemas, responseFor } from '../support/openapi.js';
import { PAID_ENV } from '../support/router-fixtures.js';
import type { Stack } from '../support/stack.js';

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
}

interface Call {
  readonly method: string;
  /** The route's template (`:name` parameters) and their values. */
  readonly template: string;
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** The bearer credential, if any. */
  readonly bearer?: string | undefined;
}

async function call(s: Stack, c: Call): Promise<Answer> {
  const path = c.template.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(c.params?.[name] ?? ''));
  const query = new URLSearchParams(c.query ?? {}).toString();
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  if (c.bearer !== undefined) headers.authorization = `Bearer ${c.bearer}`;
  if (c.body !== undefined) headers['content-type'] ??= 'application/json';
  const body =
    c.body === undefined
      ? undefined
      : headers['content-type'] === 'application/json'
        ? JSON.stringify(c.body)
        : String(c.body);
  const r = await fetch(`${s.proxyUrl}${path}${query === '' ? '' : `?${query}`}`, {
    method: c.method,
    headers,
    ...(body === undefined ? {} : { body }),
    redirect: 'manual',
    signal: AbortSignal.timeout(120_000),
  });
  return { status: r.status, type: (r.headers.get('content-type') ?? '').split(';')[0] ?? '', text: await r.text() };
}

/** What is wrong with `answer` as the document describes the operation (nothing: an empty list). */
function drift(doc: OpenApi, validate: ReturnType<typeof compileSchemas>, c: Call, answer: Answer): string[] {
  const method = c.method.toLowerCase();
  const path = openApiPath(c.template);
  const op = doc.paths[path]?.[method];
  if (op === undefined) return [`no operation ${method} ${path}`];
  const documented = responseFor(op, answer.status);
  if (documented === undefined) return [`${answer.status} is not documented`];
  // A success is documented by the operation itself, not only by its default.
  if (answer.status < 400 && !documented.explicit) return [`${answer.status} is not documented`];
  const content = documented.response.content ?? {};
  if (answer.text === '') return Object.keys(content).length === 0 ? [] : [`${answer.status} answered no body`];
  if (answer.type === 'application/json' && 'application/json' in content) {
    return validate(method, path, answer.status, JSON.parse(answer.text)).map((e) => `${answer.status} body: ${e}`);
  }
  // `*/*`: the streaming proxy relays whatever the merchant answered.
  return answer.type in content || '*/*' in content ? [] : [`${answer.status} answered ${answer.type}, not documented`];
}

function sampleCall(key: string, sample: SampleRequest, f: EndpointFixtures): Call {
  const [method = 'GET', template = '/'] = key.split(' ');
  return {
    method: sample.method ?? method,
    template,
    ...(sample.params === undefined ? {} : { params: sample.params }),
    ...(sample.query === undefined ? {} : { query: sample.query }),
    ...(sample.headers === undefined ? {} : { headers: sample.headers }),
    ...(sample.body === undefined ? {} : { body: sample.body }),
    bearer: sample.apiKey ?? (sample.as === 'seller' ? f.seller.api : f.subscriber.api).apiKey,
  };
}

const codeOf = (a: Answer): string | undefined => {
  if (a.type !== 'application/json') return undefined;
  const code = (JSON.parse(a.text) as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
};

forEachDb(
  ({ stack, test: register }) => {
    const fx = suiteEndpointFixtures(stack);
    const served = async () => {
      const doc = (await (await fetch(`${stack().proxyUrl}/api/v1/openapi.json`)).json()) as OpenApi;
      return { doc, validate: compileSchemas(doc) };
    };

    register('every route answers a valid request as the served document says (status and body schema)', async (t) => {
      t.timeout(600_000);
      const f = await fx();
      const { doc, validate } = await served();
      const routes = new Set((await declaredRoutes(stack().ctx)).map((r) => `${r.method} ${r.path}`));
      const covered: string[] = [];
      const failures: string[] = [];
      for (const [key, spec] of Object.entries(ENDPOINTS)) {
        const c = sampleCall(key, await spec.sample(f), f);
        const answer = await call(stack(), c);
        const ok =
          spec.okStatus === undefined ? answer.status >= 200 && answer.status < 300 : answer.status === spec.okStatus;
        const wrong = drift(doc, validate, c, answer);
        if (!ok) failures.push(`${key}: the sample answered ${answer.status} ${answer.text.slice(0, 300)}`);
        else if (wrong.length > 0) failures.push(`${key}: ${wrong.join('; ')}`);
        else covered.push(key);
      }
      t.log(`${covered.length} of ${routes.size} routes covered by a successful call validated against the document`);
      t.deepEqual(failures, []);
      t.deepEqual([...covered].sort(), [...routes].sort());
    });

    register('every non-public route refuses a call without a credential as the document says', async (t) => {
      const { doc, validate } = await served();
      const failures: string[] = [];
      let checked = 0;
      for (const r of await declaredRoutes(stack().ctx)) {
        if (r.public) continue;
        const params = Object.fromEntries([...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => [m[1], 'x']));
        const filled: Call = { method: r.method === '*' ? 'GET' : r.method, template: r.path, params };
        const answer = await call(stack(), filled);
        const op = doc.paths[openApiPath(r.path)]?.[filled.method.toLowerCase()];
        const code = codeOf(answer);
        const wrong = [
          ...(answer.status === 401 ? [] : [`answered ${answer.status}`]),
          ...(code !== undefined && op?.['x-error-codes']?.includes(code) ? [] : [`${code} is not in x-error-codes`]),
          ...drift(doc, validate, filled, answer),
        ];
        if (wrong.length > 0) failures.push(`${r.method} ${r.path}: ${wrong.join('; ')}`);
        checked++;
      }
      t.true(checked > 70, `${checked} routes`);
      t.deepEqual(failures, []);
    });

    register('refusals answer a documented code with the documented body', async (t) => {
      const f = await fx();
      const { doc, validate } = await served();
      const seller = f.seller.api.apiKey;
      const subscriber = f.subscriber.api.apiKey;
      const commerce = await f.commerceToken();
      const unknown = randomUUID();
      const limited = await createClient(stack().ctx, { name: 'Limited', redirectUris: ['https://l.example/cb'] });
      const em = stack().ctx.db.em();
      em.create(OAuthDeviceRate, {
        bucket: `client:${limited.clientId}`,
        windowStartedAt: new Date(),
        used: stack().ctx.config.OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT,
      });
      await em.flush();
      const cases: { call: Call; status: number; code?: string; oauthError?: string }[] = [
        {
          call: {
            method: 'GET',
            template: '/api/v1/protocol/plans/:planId',
            params: { planId: '999999' },
            bearer: seller,
          },
          status: 404,
          code: 'BCK.PROTOCOL.0003',
        },
        {
          call: { method: 'POST', template: '/api/v1/protocol/agents', body: {}, bearer: seller },
          status: 400,
          code: 'BCK.HTTP.0400',
        },
        {
          call: { method: 'POST', template: '/api/v1/protocol/agents', body: '{"name":', bearer: seller },
          status: 400,
          code: 'BCK.HTTP.0400',
        },
        {
          call: { method: 'GET', template: '/api/v1/delegation/:id', params: { id: unknown }, bearer: subscriber },
          status: 404,
          code: 'BCK.DELEGATION.0001',
        },
        {
          call: {
            method: 'GET',
            template: '/api/v1/x402/permissions/:permissionHash',
            params: { permissionHash: `0x${'00'.repeat(32)}` },
            bearer: subscriber,
          },
          status: 404,
          code: 'BCK.X402.0001',
        },
        {
          call: { method: 'POST', template: '/api/v1/router/route', body: { requestId: 'r' }, bearer: subscriber },
          status: 400,
          code: 'BCK.ROUTER.0001',
        },
        {
          call: {
            method: 'POST',
            template: '/api/v1/router/payments/:id/settled',
            params: { id: unknown },
            body: { txHash: `0x${'ab'.repeat(32)}` },
            bearer: subscriber,
          },
          status: 404,
          code: 'BCK.ROUTER.0004',
        },
        {
          call: { method: 'GET', template: '/api/v1/protocol/agents', bearer: commerce },
          status: 403,
          code: 'BCK.OAUTH.0030',
        },
        {
          call: {
            method: 'POST',
            template: '/api/v1/router/commerce/route',
            body: { requestId: 'r', url: 'http://127.0.0.1:9/' },
            bearer: subscriber,
          },
          status: 403,
          code: 'BCK.OAUTH.0031',
        },
        {
          call: {
            method: 'GET',
            template: '/api/v1/organizations/:orgId/members',
            params: { orgId: unknown },
            bearer: seller,
          },
          status: 404,
          code: 'BCK.ORG.0001',
        },
        {
          call: {
            method: 'POST',
            template: '/oauth/bindings/:bindingId/revoke',
            params: { bindingId: unknown },
            bearer: subscriber,
          },
          status: 404,
          code: 'BCK.OAUTH.0019',
        },
        {
          call: { method: 'POST', template: '/oauth/token', body: { grant_type: 'password', client_id: 'x' } },
          status: 400,
          oauthError: 'unsupported_grant_type',
        },
        {
          call: {
            method: 'POST',
            template: '/oauth/token',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'nobody', refresh_token: 'x' }),
          },
          status: 401,
          oauthError: 'invalid_client',
        },
        // A client whose device authorization window is used up: 429, the RFC 6749 body and Retry-After.
        {
          call: {
            method: 'POST',
            template: '/oauth/device_authorization',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ client_id: limited.clientId, scope: 'commerce' }),
          },
          status: 429,
          oauthError: 'temporarily_unavailable',
        },
        // The pages answer their errors as pages: a form without its CSRF token.
        {
          call: { method: 'POST', template: '/oauth/sign-out', body: { csrf: 'forged', return_to: '/device' } },
          status: 403,
        },
      ];
      // An Idempotency-Key names one request: the same key with another body is 409.
      const key = `openapi-${randomUUID()}`;
      const mint = (amount: string): Call => ({
        method: 'POST',
        template: '/api/v1/protocol/plans/mint',
        headers: { 'idempotency-key': key },
        body: { planId: f.planId, holderAddress: f.subscriber.walletAddress, amount },
        bearer: seller,
      });
      t.is((await call(stack(), mint('1'))).status, 200);
      cases.push({ call: mint('2'), status: 409, code: 'BCK.IDEMPOTENCY.0001' });

      const failures: string[] = [];
      for (const { call: c, status, code, oauthError } of cases) {
        const answer = await call(stack(), c);
        const where = `${c.method} ${c.template}`;
        const op = doc.paths[openApiPath(c.template)]?.[c.method.toLowerCase()];
        const got = codeOf(answer);
        const wrong = [
          ...(answer.status === status ? [] : [`answered ${answer.status} ${answer.text.slice(-300)}`]),
          ...(code === undefined || (got === code && op?.['x-error-codes']?.includes(code) === true)
            ? []
            : [`code ${got}, want ${code} in x-error-codes`]),
          ...(oauthError === undefined || (JSON.parse(answer.text) as { error?: unknown }).error === oauthError
            ? []
            : [`error ${answer.text}`]),
          ...drift(doc, validate, c, answer),
        ];
        if (wrong.length > 0) failures.push(`${where}: ${wrong.join('; ')}`);
      }
      t.deepEqual(failures, []);
    });
  },
  PAID_ENV,
  { serial: true },
);
