import { revokeApiKey } from '../../shared/accounts/api-keys.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';

const ENVELOPE_KEYS = [
  'category',
  'code',
  'correlationId',
  'date',
  'details',
  'docsUrl',
  'error',
  'hint',
  'httpStatus',
  'message',
  'params',
  'retryable',
  'uuid',
];

forEachDb(({ stack, test }) => {
  test('both processes answer /healthz', async (t) => {
    const p = await fetch(`${stack().proxyUrl}/healthz`);
    const a = await fetch(`${stack().adminUrl}/healthz`);
    t.is(p.status, 200);
    t.is(a.status, 200);
    t.deepEqual(await p.json(), { status: 'ok', service: 'proxy' });
  });

  test('missing, malformed, unknown and other-environment keys get 401 with the envelope', async (t) => {
    const base = stack().baseUrl;
    for (const key of [undefined, 'garbage', 'sandbox:doesnotexist', 'live:doesnotexist']) {
      const r = await apiClient(base, key).get('/protocol/agents');
      t.is(r.status, 401, String(key));
      t.is(r.body.code, 'BCK.AUTH.0001');
      t.deepEqual(Object.keys(r.body).sort(), ENVELOPE_KEYS);
      t.is(r.body.httpStatus, 401);
      t.is(r.body.category, 'auth');
      t.is(r.body.correlationId, r.headers.get('x-correlation-id'));
    }
    // Not Bearer
    const r = await fetch(`${base}/protocol/agents`, { headers: { authorization: 'Basic abc' } });
    t.is(r.status, 401);
  });

  test('a revoked key stops working within a second', async (t) => {
    const u = await stack().user();
    t.not((await u.api.get('/protocol/agents')).status, 401);
    await revokeApiKey(stack().ctx, u.apiKeyId);
    await new Promise((r) => setTimeout(r, 1100));
    t.is((await u.api.get('/protocol/agents')).status, 401);
  });

  test('the correlation id is taken from x-correlation-id or x-request-id, or generated', async (t) => {
    const u = await stack().user();
    const a = await u.api.call('GET', '/protocol/nothing-here', undefined, { 'x-correlation-id': 'abc-123' });
    t.is(a.headers.get('x-correlation-id'), 'abc-123');
    t.is(a.body.correlationId, 'abc-123');
    const b = await u.api.call('GET', '/protocol/nothing-here', undefined, { 'x-request-id': 'req-9' });
    t.is(b.headers.get('x-correlation-id'), 'req-9');
    const c = await u.api.call('GET', '/protocol/nothing-here', undefined, {
      'x-correlation-id': 'bad id with spaces',
    });
    t.regex(c.headers.get('x-correlation-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  test('unknown routes are 404 with the envelope, on both ports', async (t) => {
    const u = await stack().user();
    const r = await u.api.get('/protocol/nothing-here');
    t.is(r.status, 404);
    t.is(r.body.code, 'BCK.HTTP.0404');
    const router = await u.api.post('/router/nothing-here', {});
    t.is(router.status, 404);
    t.is(router.body.code, 'BCK.HTTP.0404');
  });

  test('malformed JSON is 400, non-object JSON is 400, oversize bodies are 413: never 500', async (t) => {
    const u = await stack().user();
    for (const body of ['{', '{"a":', 'nul', '"\\u12"', '[1,2', '\u0000']) {
      const r = await u.api.raw('POST', '/protocol/agents', body);
      t.is(r.status, 400, body);
      t.is(r.body.code, 'BCK.HTTP.0400');
    }
    const big = JSON.stringify({ name: 'x'.repeat(1_100_000) });
    const r = await u.api.raw('POST', '/protocol/agents', big);
    t.is(r.status, 413);
    t.is(r.body.code, 'BCK.HTTP.0413');
  });

  test('the JWKS is published with ES256 keys', async (t) => {
    const r = await fetch(`${stack().proxyUrl}/.well-known/jwks.json`);
    t.is(r.status, 200);
    const jwks = (await r.json()) as { keys: { kty: string; alg: string; kid: string; d?: string }[] };
    t.true(jwks.keys.length >= 1);
    for (const k of jwks.keys) {
      t.is(k.alg, 'ES256');
      t.is(k.kty, 'EC');
      t.is(k.d, undefined, 'no private part');
    }
  });
});
