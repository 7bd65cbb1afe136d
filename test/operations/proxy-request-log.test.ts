// The proxy logs each of its own requests at info when it finished: method, path without the query, status,
// duration, correlation id and the paymentId when there is one; never a credential (the caller's key, the
// upstream authorization) or the query string.
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { forEachDb } from '../support/matrix.js';
import { loggedText, withLoggingProxy } from '../support/proxy-log.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, payingUser } from '../support/router-fixtures.js';

const m = merchantsOfFile(10_000n);

interface LogLine {
  level: number;
  msg: string;
  correlationId?: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
  paymentId?: string;
}

const linesOf = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);
const loggedIds = (text: string) =>
  new Set(
    linesOf(text)
      .filter((l) => l.msg === 'request')
      .map((l) => l.correlationId),
  );

/** The log's lines, read until each correlation id has its request line. */
async function requestLines(file: string, ids: readonly string[]): Promise<{ text: string; lines: LogLine[] }> {
  const text = await loggedText(
    file,
    (x) => ids.every((id) => loggedIds(x).has(id)),
    (x) => `no request line for ${ids.filter((id) => !loggedIds(x).has(id)).join(', ')}`,
  );
  return { text, lines: linesOf(text) };
}

let n = 0;
const rid = (what: string) => `log-${what}-${Date.now()}-${++n}`;

forEachDb(({ stack, test }) => {
  test('each router request is logged at info with its paymentId and without any secret', async (t) => {
    await withLoggingProxy(stack(), { LOG_LEVEL: 'info' }, async (proxy, file) => {
      const { u, delegationId } = await payingUser(stack(), m.chain, 100_000_000n, 1000);
      const base = `${proxy.url}/api/v1`;
      const auth = { authorization: `Bearer ${u.apiKey}` };
      const upstreamSecret = `Bearer upstream-secret-${rid('u')}`;

      // A paid streaming call: the paymentId comes from the X-Router-Payment-Id the route sets.
      const streamId = rid('stream');
      const streamRequestId = rid('req');
      const paid = await fetch(`${base}/router/proxy?token=query-secret`, {
        headers: {
          ...auth,
          'x-correlation-id': streamId,
          'x-router-target-url': m.v2.url + m.v2.paidPath,
          'x-router-delegation-id': delegationId,
          'x-router-request-id': streamRequestId,
          'x-router-upstream-authorization': upstreamSecret,
        },
      });
      t.is(paid.status, 200, await paid.text());
      const streamPayment = paid.headers.get('x-router-payment-id') ?? '';
      t.regex(streamPayment, /^[0-9a-f-]{36}$/);

      // The same requestId again: a 409 naming the first payment, from the error.
      const dupId = rid('dup');
      const dup = await fetch(`${base}/router/proxy`, {
        headers: {
          ...auth,
          'x-correlation-id': dupId,
          'x-router-target-url': m.v2.url + m.v2.paidPath,
          'x-router-delegation-id': delegationId,
          'x-router-request-id': streamRequestId,
        },
      });
      t.is(dup.status, 409);
      await dup.text();

      // Mode A: the paymentId comes from the route's answer.
      const offer = await fetch(m.v2.url + m.v2.paidPath);
      const required = decodePaymentRequiredV2(offer.headers.get('payment-required') ?? '');
      if (required.type !== 'decoded') throw new Error(required.reason);
      const mintId = rid('mint');
      const minted = await fetch(`${base}/router/payments`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'x-correlation-id': mintId },
        body: JSON.stringify({
          protocol: 'x402',
          delegationId,
          requestId: rid('req'),
          target: { accepts: required.value.accepts },
        }),
      });
      const mintBody = (await minted.json()) as { paymentId: string };
      t.is(minted.status, 200, JSON.stringify(mintBody));

      // No payment: a listing, and a refused key.
      const listId = rid('list');
      const list = await fetch(`${base}/router/payments?from=2026-01-01`, {
        headers: { ...auth, 'x-correlation-id': listId },
      });
      t.is(list.status, 200);
      await list.text();
      const badKey = `sandbox:${'z'.repeat(43)}`;
      const refusedId = rid('refused');
      const refused = await fetch(`${base}/router/payments`, {
        headers: { authorization: `Bearer ${badKey}`, 'x-correlation-id': refusedId },
      });
      t.is(refused.status, 401);
      await refused.text();

      const { text, lines } = await requestLines(file, [streamId, dupId, mintId, listId, refusedId]);
      const line = (id: string) => lines.find((l) => l.msg === 'request' && l.correlationId === id);
      const expected: [string, Partial<LogLine>][] = [
        [streamId, { method: 'GET', path: '/api/v1/router/proxy', status: 200, paymentId: streamPayment }],
        [dupId, { method: 'GET', path: '/api/v1/router/proxy', status: 409, paymentId: streamPayment }],
        [mintId, { method: 'POST', path: '/api/v1/router/payments', status: 200, paymentId: mintBody.paymentId }],
        [listId, { method: 'GET', path: '/api/v1/router/payments', status: 200 }],
        [refusedId, { method: 'GET', path: '/api/v1/router/payments', status: 401 }],
      ];
      for (const [id, want] of expected) {
        const got = line(id);
        t.like(got, { level: 30, ...want }, id);
        t.is(typeof got?.ms, 'number');
        if (want.paymentId === undefined) t.false(got !== undefined && 'paymentId' in got, id);
      }
      // No secret anywhere in the log: not the caller's key (nor its random part), not the refused key, not the
      // upstream authorization, not the query string.
      for (const secret of [u.apiKey, u.apiKey.slice('sandbox:'.length), badKey, upstreamSecret, 'query-secret']) {
        t.false(text.includes(secret), `the log holds ${secret.slice(0, 12)}...`);
      }
      t.false(/authorization/i.test(text), 'no authorization header is logged');
    });
  });
}, PAID_ENV);
