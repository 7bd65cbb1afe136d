// Log format: JSON lines wherever the log does not go to a terminal (a pipe here), lines for a person with
// LOG_FORMAT=pretty; stdout keeps only the readiness line either way; and no secret of a paid call (the API key,
// the upstream's credential, the payment credential the router made) reaches the log in either format.
import test from 'ava';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { runEntry } from '../support/cli.js';
import { forEachDb } from '../support/matrix.js';
import { loggedText, withLoggingProxy } from '../support/proxy-log.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, payingUser } from '../support/router-fixtures.js';

/** Runs test/support/log-child.ts with stdout and stderr as pipes (not terminals). */
const runChild = (env: Record<string, string>) =>
  runEntry('test/support/log-child.ts', [], { LOG_FORMAT: '', LOG_FILE: '', LOG_LEVEL: 'info', NO_COLOR: '', ...env });

const nonEmpty = (text: string) => text.split('\n').filter((l) => l !== '');

for (const format of ['', 'auto', 'json']) {
  test(`LOG_FORMAT=${JSON.stringify(format)} to a pipe: one JSON object per line, nothing on stdout`, async (t) => {
    const r = await runChild({ LOG_FORMAT: format });
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, '');
    const lines = nonEmpty(r.stderr).map((l) => JSON.parse(l) as Record<string, unknown>);
    t.deepEqual(
      lines.map((l) => [l.level, l.name, l.msg]),
      [
        [30, 'log-child', 'request'],
        [40, 'log-child', 'with a header'],
        [50, 'log-child', 'failed'],
      ],
    );
    t.like(lines[0], { correlationId: 'c-1', method: 'GET', path: '/a b', status: 200 });
    t.deepEqual(lines[1]?.headers, { authorization: '[redacted]' });
    t.like(lines[2]?.err, { type: 'Error', message: 'boom' });
  });
}

test('LOG_FORMAT=pretty: lines for a person (time, level, name, message, key=value, the stack below)', async (t) => {
  const r = await runChild({ LOG_FORMAT: 'pretty' });
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, '');
  const lines = nonEmpty(r.stderr);
  for (const l of lines) t.throws(() => JSON.parse(l), undefined, `not JSON: ${l}`);
  t.false(r.stderr.includes('\u001b['), 'no colours on a pipe');
  t.regex(
    lines[0] ?? '',
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}log-child: request correlationId=c-1 method=GET path="\/a b" status=200$/,
  );
  t.regex(lines[1] ?? '', / WARN {2}log-child: with a header headers=\{"authorization":"\[redacted\]"\}$/);
  t.regex(lines[2] ?? '', / ERROR log-child: failed err=boom$/);
  t.is(lines[3], '    Error: boom');
  t.regex(lines[4] ?? '', /^ {8}at /);
  t.false(r.stderr.includes('child-secret-1'));
});

test('LOG_FORMAT is checked: another value is a configuration error naming it', async (t) => {
  const r = await runChild({ LOG_FORMAT: 'xml' });
  t.not(r.code, 0);
  t.regex(r.stderr, /LOG_FORMAT/);
});

const m = merchantsOfFile(10_000n);

/** The log file's text once every marker is in it. */
const logWith = (file: string, markers: readonly string[]): Promise<string> =>
  loggedText(
    file,
    (text) => markers.every((x) => text.includes(x)),
    (text) => `log lacks ${markers.filter((x) => !text.includes(x)).join(', ')}`,
  );

let n = 0;
const rid = (what: string) => `logfmt-${what}-${Date.now()}-${++n}`;

forEachDb(({ stack, test }) => {
  for (const format of ['json', 'pretty']) {
    test(`LOG_FORMAT=${format}: a paid call's log holds no API key, upstream credential or payment credential`, async (t) => {
      // Debug: everything the proxy can say about these calls.
      await withLoggingProxy(stack(), { LOG_LEVEL: 'debug', LOG_FORMAT: format }, async (proxy, file) => {
        const { u, delegationId } = await payingUser(stack(), m.chain, 100_000_000n, 1000);
        const base = `${proxy.url}/api/v1`;
        const auth = { authorization: `Bearer ${u.apiKey}` };
        const upstreamSecret = `Bearer upstream-secret-${rid('u')}`;

        const routeId = rid('route');
        const routed = await fetch(`${base}/router/route`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'x-correlation-id': routeId },
          body: JSON.stringify({
            requestId: rid('req'),
            delegationId,
            url: m.v2.url + m.v2.paidPath,
            headers: { authorization: upstreamSecret },
          }),
        });
        t.is(routed.status, 200, await routed.text());

        const offer = decodePaymentRequiredV2(
          (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '',
        );
        if (offer.type !== 'decoded') throw new Error(offer.reason);
        const mintId = rid('mint');
        const minted = await fetch(`${base}/router/payments`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'x-correlation-id': mintId },
          body: JSON.stringify({
            protocol: 'x402',
            delegationId,
            requestId: rid('req'),
            target: { accepts: offer.value.accepts },
          }),
        });
        const mintBody = (await minted.json()) as { credential: { value: string } };
        t.is(minted.status, 200, JSON.stringify(mintBody));

        const refusedId = rid('refused');
        const forged = `${u.apiKey.slice(0, -4)}zzzz`;
        const refused = await fetch(`${base}/router/payments`, {
          headers: { authorization: `Bearer ${forged}`, 'x-correlation-id': refusedId },
        });
        t.is(refused.status, 401);
        await refused.text();

        const text = await logWith(file, [routeId, mintId, refusedId]);
        const lines = nonEmpty(text);
        // The format asked for, line by line (a pretty line may be followed by an indented stack).
        if (format === 'json') for (const l of lines) t.notThrows(() => JSON.parse(l), l);
        else
          for (const l of lines.filter((x) => !x.startsWith(' ')))
            t.regex(l, /^\d\d:\d\d:\d\d\.\d{3} [A-Z]{4,5} +proxy: /);
        for (const secret of [u.apiKey, forged, upstreamSecret, 'upstream-secret', mintBody.credential.value]) {
          t.false(text.includes(secret), `the log holds ${secret.slice(0, 12)}...`);
        }
      });
    });
  }
}, PAID_ENV);
