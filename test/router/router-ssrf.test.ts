// SSRF through the real proxy process started WITHOUT ROUTER_ALLOW_PRIVATE_TARGETS:
// every target form below, sent to POST /router/route (JSON body) and ALL /router/proxy (X-Router-Target-Url),
// is refused with 400 BCK.ROUTER.0001, and a TCP listener on 127.0.0.1 (and [::1] when the machine has it) sees
// no connection. A separate process cannot take an injected resolver, so only the forms refused by the URL and
// literal-address policy are used here; test/upstream/upstream-ssrf.test.ts covers names that resolve to private addresses.
// A second proxy of the same stack runs WITH ROUTER_ALLOW_PRIVATE_TARGETS=true (two instances for the
// two behaviours): cloud metadata and link-local forms are still refused there, while loopback is reached.
import test from 'ava';
import { type Listener, listen as listenCounting } from '../support/counting-listener.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { createDelegation } from '../support/router-fixtures.js';

/** Every accepted connection gets a 402: a leak would look like a payable merchant. */
const listen = (host: string, port = 0) =>
  listenCounting(host, port, 'HTTP/1.1 402 Payment Required\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');

let v4: Listener;
let v6: Listener | undefined;

test.before(async () => {
  v4 = await listen('127.0.0.1');
  try {
    v6 = await listen('::1', v4.port);
  } catch {
    v6 = undefined;
  }
});
test.after.always(() => {
  v4?.server.close();
  v6?.server.close();
});
const accepted = (): number => v4.accepted + (v6?.accepted ?? 0);

const P = '{port}';
const FORMS: string[] = [
  // IPv4 loopback in decimal, octal, hex, short and trailing-dot forms
  `http://127.0.0.1:${P}/`,
  `http://2130706433:${P}/`,
  `http://0177.0.0.1:${P}/`,
  `http://0x7f000001:${P}/`,
  `http://0x7f.1:${P}/`,
  `http://0X7F.0X0.0X0.0X1:${P}/`,
  `http://0177.1:${P}/`,
  `http://017700000001:${P}/`,
  `http://127.1:${P}/`,
  `http://127.0.1:${P}/`,
  `http://127.0.0.1.:${P}/`,
  `http://127.255.255.254:${P}/`,
  `http://１２７.０.０.１:${P}/`,
  `http://127。0。0。1:${P}/`,
  // IPv6 forms of loopback / this host
  `http://[::ffff:127.0.0.1]:${P}/`,
  `http://[::ffff:7f00:1]:${P}/`,
  `http://[::127.0.0.1]:${P}/`,
  `http://0.0.0.0:${P}/`,
  `http://0:${P}/`,
  `http://[::]:${P}/`,
  `http://[::1]:${P}/`,
  `http://[2002:7f00:1::]:${P}/`,
  'http://[2002:a9fe:a9fe::1]/',
  `http://[64:ff9b::7f00:1]:${P}/`,
  'http://[64:ff9b::10.0.0.1]/',
  'http://[fd00::1]/',
  'http://[fc00::1]/',
  'http://[fe80::1]/',
  'http://[2001:db8::1]/',
  // Metadata
  'http://169.254.169.254/latest/meta-data',
  'http://0xa9fea9fe/latest/meta-data',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://100.100.100.200/latest/meta-data/',
  'http://168.63.129.16/machine?comp=goalstate',
  // Private and special IPv4
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  // Local names
  `http://localhost:${P}/`,
  `http://LOCALHOST.:${P}/`,
  `http://foo.localhost:${P}/`,
  `http://localhost.localdomain:${P}/`,
  `http://printer.local:${P}/`,
  `http://db.corp.internal:${P}/`,
  // Userinfo and host confusion
  `http://user:pass@example.com:${P}/`,
  `http://example.com@127.0.0.1:${P}/`,
  `http://127.0.0.1%23@example.com:${P}/`,
  `http://example.com%40127.0.0.1:${P}/`,
  `http://%6c%6fcalhost:${P}/`,
  `http://example.com\\@127.0.0.1:${P}/`,
  `http:127.0.0.1:${P}/`,
  `http:/127.0.0.1:${P}/`,
  `//127.0.0.1:${P}/`,
  // Non-http schemes
  'file:///etc/passwd',
  'ftp://example.com/',
  `gopher://127.0.0.1:${P}/_GET%20/`,
  'data:text/plain,hello',
  'javascript:alert(1)',
  `ws://127.0.0.1:${P}/`,
  `dict://127.0.0.1:${P}/info`,
];

/**
 * Refused by a proxy started with ROUTER_ALLOW_PRIVATE_TARGETS=true too: instance metadata in the spellings the
 * WHATWG parser normalises (decimal, hex, octal, short, full-width) and its IPv4-mapped / NAT64 / 6to4 forms, the
 * other metadata endpoints, link-local, and the metadata names.
 */
const METADATA_FORMS: string[] = [
  'http://169.254.169.254/latest/meta-data/',
  `http://169.254.169.254:${P}/latest/meta-data/`,
  'http://2852039166/latest/meta-data/',
  'http://0xa9fea9fe/latest/meta-data/',
  'http://0251.0376.0251.0376/latest/meta-data/',
  'http://169.254.43518/latest/meta-data/',
  'http://169.16689662/latest/meta-data/',
  'http://169.254.169.254./latest/meta-data/',
  'http://１６９.２５４.１６９.２５４/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/latest/meta-data/',
  'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
  'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
  'http://[2002:a9fe:a9fe::]/latest/meta-data/',
  'http://169.254.170.2/v2/credentials/',
  'http://100.100.100.200/latest/meta-data/',
  'http://1684301000/latest/meta-data/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://[fd20:ce::254]/computeMetadata/v1/',
  'http://168.63.129.16/machine?comp=goalstate',
  'http://169.254.1.1/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata/computeMetadata/v1/',
];

/** Header values are ByteStrings: forms with characters beyond Latin-1 go through /router/route only. */
const headerSafe = (s: string) => /^[\x21-\x7e]+$/.test(s);

forEachDb(({ stack, test }) => {
  test(`${FORMS.length} target forms -> 400 BCK.ROUTER.0001 on /router/route and /router/proxy; no connection`, async (t) => {
    t.true(FORMS.length >= 40);
    const u = await stack().user();
    const delegationId = await createDelegation(u, 1000);
    const before = accepted();
    let n = 0;
    for (const form of FORMS) {
      const url = form.replaceAll(P, String(v4.port));
      const r = await u.api.post('/router/route', { requestId: `ssrf-${++n}`, delegationId, url });
      t.is(r.status, 400, `route ${url}: ${r.text}`);
      t.is(r.body.code, 'BCK.ROUTER.0001', `route ${url}`);
      if (!headerSafe(url)) continue;
      for (const path of ['/router/proxy', '/proxy']) {
        const p = await u.api.call('GET', path, undefined, {
          'x-router-target-url': url,
          'x-router-delegation-id': delegationId,
          'x-router-request-id': `ssrf-p-${++n}`,
        });
        t.is(p.status, 400, `proxy ${url}: ${p.text}`);
        t.is(p.body.code, 'BCK.ROUTER.0001', `proxy ${url}`);
      }
    }
    t.is(accepted(), before, 'the loopback listener saw no connection');
    t.is((await u.api.get('/router/payments')).body.total, 0);
  });

  test(`ROUTER_ALLOW_PRIVATE_TARGETS=true: ${METADATA_FORMS.length} metadata forms still 400 BCK.ROUTER.0001; loopback reached`, async (t) => {
    // A short connect timeout: a leak would try 169.254.169.254 and end as a 502, not hang the suite.
    const open = await stack().spawn('proxy', {
      ROUTER_ALLOW_PRIVATE_TARGETS: 'true',
      ROUTER_CONNECT_TIMEOUT_MS: '2000',
    });
    // Its own listener: the tests of this file run concurrently, and the one above counts the shared listener.
    const own = await listen('127.0.0.1');
    try {
      const u = await stack().user();
      const api = apiClient(`${open.url}/api/v1`, u.apiKey);
      const delegationId = await createDelegation(u, 1000);
      let n = 0;
      for (const form of METADATA_FORMS) {
        const url = form.replaceAll(P, String(own.port));
        const r = await api.post('/router/route', { requestId: `meta-${++n}`, delegationId, url });
        t.is(r.status, 400, `route ${url}: ${r.text}`);
        t.is(r.body.code, 'BCK.ROUTER.0001', `route ${url}`);
        t.regex(String(r.body.details), /metadata|link-local/, `route ${url}`);
        t.regex(String(r.body.details), /not even with private targets allowed/, `route ${url}`);
        if (!headerSafe(url)) continue;
        const p = await api.call('GET', '/router/proxy', undefined, {
          'x-router-target-url': url,
          'x-router-delegation-id': delegationId,
          'x-router-request-id': `meta-p-${++n}`,
        });
        t.is(p.status, 400, `proxy ${url}: ${p.text}`);
        t.is(p.body.code, 'BCK.ROUTER.0001', `proxy ${url}`);
      }
      t.is(own.accepted, 0, 'the loopback listener saw no connection');

      // Control, same proxy: loopback is reached (the listener's bare 402 offers nothing fundable, hence a 400
      // naming why, but only after the probe connected).
      for (const host of ['127.0.0.1', 'localhost']) {
        const seen = own.accepted;
        const r = await api.post('/router/route', {
          requestId: `meta-ctl-${++n}`,
          delegationId,
          url: `http://${host}:${own.port}/`,
        });
        t.not(r.status, 502, `${host}: ${r.text}`);
        t.true(own.accepted > seen, `${host} reached the listener`);
      }
      t.is((await api.get('/router/payments')).body.total, 0);
    } finally {
      own.server.close();
      await open.stop();
    }
  });

  test('positive control: the listener is reachable from this test (it would have counted a leak)', async (t) => {
    const before = accepted();
    await fetch(`http://127.0.0.1:${v4.port}/`).catch(() => undefined);
    t.true(accepted() > before);
  });
});
