// The admin process answers a wrong method as the proxy does: 405 with the error envelope and an Allow header
// (RFC 9110 §15.5.6), on its own port and through the proxy; HEAD runs a GET route.
import { forEachDb } from '../support/matrix.js';

forEachDb(({ stack, test }) => {
  test('a wrong method on an admin route is 405 with the envelope and Allow, on both ports', async (t) => {
    const u = await stack().user();
    const auth = { authorization: `Bearer ${u.apiKey}` };
    for (const base of [`${stack().adminUrl}/api/v1`, stack().baseUrl]) {
      for (const [method, path, allow] of [
        ['DELETE', '/protocol/agents', 'GET, HEAD, POST'],
        ['PATCH', '/protocol/plans/1', 'GET, HEAD, PUT'],
        ['POST', '/delegation/0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59', 'DELETE, GET, HEAD'],
        ['OPTIONS', '/x402/verify', 'POST'],
      ] as const) {
        const r = await fetch(`${base}${path}`, { method, headers: auth });
        const body = (await r.json()) as { code: string; httpStatus: number; correlationId: string };
        t.is(r.status, 405, `${base} ${method} ${path}`);
        t.regex(r.headers.get('content-type') ?? '', /^application\/json/);
        t.is(body.code, 'BCK.HTTP.0405');
        t.is(body.httpStatus, 405);
        t.is(body.correlationId, r.headers.get('x-correlation-id') ?? '');
        t.is(r.headers.get('allow'), allow, `${method} ${path}`);
      }
    }
  });

  test('the same wrong method without a key is 401: the Allow header is not shown to strangers', async (t) => {
    for (const base of [`${stack().adminUrl}/api/v1`, stack().baseUrl]) {
      const r = await fetch(`${base}/protocol/agents`, { method: 'DELETE' });
      t.is(r.status, 401);
      t.is(r.headers.get('allow'), null);
      t.is(((await r.json()) as { code: string }).code, 'BCK.AUTH.0001');
    }
  });

  test('a wrong method on a public route is 405 without a key, on both processes; HEAD runs a GET route', async (t) => {
    for (const base of [stack().adminUrl, stack().proxyUrl]) {
      const r = await fetch(`${base}/healthz`, { method: 'POST' });
      t.is(r.status, 405, base);
      t.is(r.headers.get('allow'), 'GET, HEAD');
      t.is(((await r.json()) as { code: string }).code, 'BCK.HTTP.0405');
    }
    const head = await fetch(`${stack().proxyUrl}/.well-known/jwks.json`, { method: 'HEAD' });
    t.is(head.status, 200);
    t.regex(head.headers.get('content-type') ?? '', /application\/json/);
    t.is(await head.text(), '');
  });
});
