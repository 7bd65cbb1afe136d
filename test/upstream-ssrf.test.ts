// SSRF table for the outbound module (DESIGN §7): every form below is refused by an upstream created without
// allowPrivate (what ROUTER_ALLOW_PRIVATE_TARGETS unset gives the proxy), as a refusal (400 BCK.ROUTER.0001), and
// no connection is made. A real TCP listener on 127.0.0.1 (and [::1] when the machine has it) counts accepted
// connections, and the injected resolver maps every name to loopback, so any leak through the policy would land
// on the listener and be counted. The positive controls at the end prove the listener does see connections.
import { once } from 'node:events';
import { type AddressInfo, type Server, createServer } from 'node:net';
import test from 'ava';
import { classifyIp } from '../shared/upstream/address-policy.js';
import { createUpstream } from '../shared/upstream/client.js';
import { type ResolvedAddress, type Resolver, resolveChecked } from '../shared/upstream/resolver.js';
import { upstreamAppError } from '../shared/upstream/to-app-error.js';
import { parseTargetUrl } from '../shared/upstream/url-policy.js';

interface Listener {
  server: Server;
  port: number;
  accepted: number;
}

/** A bare TCP listener that counts connections and answers any of them with an empty 204. */
async function listen(host: string, port = 0): Promise<Listener> {
  const l: Listener = { server: createServer(), port: 0, accepted: 0 };
  l.server.on('connection', (socket) => {
    l.accepted++;
    socket.on('error', () => {});
    socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
  });
  l.server.listen(port, host);
  await once(l.server, 'listening');
  l.port = (l.server.address() as AddressInfo).port;
  return l;
}

let v4: Listener;
let v6: Listener | undefined;
let control: Listener;

test.before(async () => {
  v4 = await listen('127.0.0.1');
  try {
    v6 = await listen('::1', v4.port);
  } catch {
    v6 = undefined; // no IPv6 loopback here: the [::1] forms are still refused, only not counted on a listener
  }
  control = await listen('127.0.0.1');
});

test.after.always(() => {
  v4?.server.close();
  v6?.server.close();
  control?.server.close();
});

const accepted = (): number => v4.accepted + (v6?.accepted ?? 0);

const PUBLIC = '93.184.215.14';
/** Special answers; every other name resolves to 127.0.0.1, so a leaked connection would reach the listener. */
const ANSWERS: Record<string, ResolvedAddress[]> = {
  'internal.test': [{ address: '127.0.0.1', family: 4 }],
  'loopback-range.test': [{ address: '127.4.5.6', family: 4 }],
  'mixed.test': [
    { address: '127.0.0.1', family: 4 },
    { address: PUBLIC, family: 4 },
  ],
  'v6-loopback.test': [{ address: '::1', family: 6 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'nat64.test': [{ address: '64:ff9b::7f00:1', family: 6 }],
  'sixtofour.test': [{ address: '2002:7f00:1::1', family: 6 }],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'ula.test': [{ address: 'fd12:3456::1', family: 6 }],
  'rfc1918.test': [{ address: '10.1.2.3', family: 4 }],
  'cgnat.test': [{ address: '100.64.0.1', family: 4 }],
  'zero.test': [{ address: '0.0.0.0', family: 4 }],
};

function countingResolver(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async lookup(hostname) {
      calls.push(hostname);
      return ANSWERS[hostname] ?? [{ address: '127.0.0.1', family: 4 }];
    },
  };
}

type Layer = 'url' | 'resolver';
interface Case {
  url: string;
  /** 'url': refused before any lookup; 'resolver': the name passes the URL policy, its addresses do not. */
  layer: Layer;
  why: RegExp;
}

const P = '{port}';
const LOOPBACK = /127\.0\.0\.1.*loopback|loopback/;
const cases: Case[] = [
  // IPv4 loopback in every spelling WHATWG normalises to 127.0.0.1
  { url: `http://2130706433:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://0177.0.0.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://0x7f000001:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://0x7f.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://0X7F.0X0.0X0.0X1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://0177.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://017700000001:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.0.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.0.0.1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.0.0.1.:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.0.0.1..:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127.255.255.254:${P}/`, layer: 'url', why: LOOPBACK },
  { url: `http://１２７.０.０.１:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  { url: `http://127。0。0。1:${P}/`, layer: 'url', why: /127\.0\.0\.1.*loopback/ },
  // IPv6 forms that reach loopback or this host
  { url: `http://[::ffff:127.0.0.1]:${P}/`, layer: 'url', why: /IPv4-mapped.*127\.0\.0\.1/ },
  { url: `http://[::ffff:7f00:1]:${P}/`, layer: 'url', why: /IPv4-mapped.*127\.0\.0\.1/ },
  { url: `http://[0:0:0:0:0:ffff:127.0.0.1]:${P}/`, layer: 'url', why: /IPv4-mapped/ },
  { url: `http://[::127.0.0.1]:${P}/`, layer: 'url', why: /IPv4-compatible/ },
  { url: `http://0.0.0.0:${P}/`, layer: 'url', why: /this network/ },
  { url: `http://0:${P}/`, layer: 'url', why: /this network/ },
  { url: `http://[::]:${P}/`, layer: 'url', why: /unspecified/ },
  { url: `http://[::1]:${P}/`, layer: 'url', why: /loopback/ },
  { url: `http://[0000:0000::0001]:${P}/`, layer: 'url', why: /loopback/ },
  { url: `http://[2002:7f00:1::]:${P}/`, layer: 'url', why: /6to4.*127\.0\.0\.1/ },
  { url: `http://[2002:a9fe:a9fe::1]/`, layer: 'url', why: /6to4.*169\.254\.169\.254/ },
  { url: `http://[64:ff9b::7f00:1]:${P}/`, layer: 'url', why: /NAT64.*127\.0\.0\.1/ },
  { url: `http://[64:ff9b::10.0.0.1]/`, layer: 'url', why: /NAT64.*10\.0\.0\.1/ },
  { url: `http://[64:ff9b:1::a00:1]/`, layer: 'url', why: /local-use NAT64/ },
  { url: `http://[fd00::1]/`, layer: 'url', why: /unique local/ },
  { url: `http://[fc00::1]/`, layer: 'url', why: /unique local/ },
  { url: `http://[fe80::1]/`, layer: 'url', why: /link-local/ },
  { url: `http://[fec0::1]/`, layer: 'url', why: /site-local/ },
  { url: `http://[ff02::1]/`, layer: 'url', why: /multicast/ },
  { url: `http://[2001:db8::1]/`, layer: 'url', why: /documentation/ },
  { url: `http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/`, layer: 'url', why: /Teredo/ },
  { url: `http://[100::1]/`, layer: 'url', why: /discard/ },
  // Cloud metadata
  { url: 'http://169.254.169.254/latest/meta-data', layer: 'url', why: /metadata/ },
  { url: 'http://[fd00:ec2::254]/latest/meta-data/', layer: 'url', why: /AWS instance metadata/ },
  { url: 'http://metadata.google.internal/computeMetadata/v1/', layer: 'url', why: /local or internal name/ },
  { url: 'http://metadata/computeMetadata/v1/', layer: 'url', why: /local or internal name/ },
  { url: 'http://100.100.100.200/latest/meta-data/', layer: 'url', why: /Alibaba/ },
  { url: 'http://168.63.129.16/machine?comp=goalstate', layer: 'url', why: /Azure/ },
  { url: 'http://0xa9fea9fe/latest/meta-data', layer: 'url', why: /metadata/ },
  // Private, shared, special-purpose IPv4
  { url: 'http://10.0.0.1/', layer: 'url', why: /RFC 1918/ },
  { url: 'http://172.16.0.1/', layer: 'url', why: /RFC 1918/ },
  { url: 'http://172.31.255.255/', layer: 'url', why: /RFC 1918/ },
  { url: 'http://192.168.1.1/', layer: 'url', why: /RFC 1918/ },
  { url: 'http://100.64.0.1/', layer: 'url', why: /carrier-grade NAT/ },
  { url: 'http://169.254.1.1/', layer: 'url', why: /link-local/ },
  { url: 'http://192.0.0.8/', layer: 'url', why: /IETF protocol assignments/ },
  { url: 'http://192.0.2.1/', layer: 'url', why: /TEST-NET-1/ },
  { url: 'http://192.88.99.1/', layer: 'url', why: /6to4 relay/ },
  { url: 'http://198.18.0.1/', layer: 'url', why: /benchmarking/ },
  { url: 'http://198.51.100.7/', layer: 'url', why: /TEST-NET-2/ },
  { url: 'http://203.0.113.9/', layer: 'url', why: /TEST-NET-3/ },
  { url: 'http://224.0.0.1/', layer: 'url', why: /multicast/ },
  { url: 'http://240.0.0.1/', layer: 'url', why: /reserved/ },
  { url: 'http://255.255.255.255/', layer: 'url', why: /broadcast/ },
  // Local names
  { url: `http://localhost:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://LOCALHOST.:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://foo.localhost:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://ⓛocalhost:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://localhost.localdomain:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://ip6-localhost:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://printer.local:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://db.corp.internal:${P}/`, layer: 'url', why: /local or internal name/ },
  { url: `http://router.home.arpa:${P}/`, layer: 'url', why: /local or internal name/ },
  // Userinfo and host-confusion tricks
  { url: `http://user:pass@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://user@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://:pass@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://example.com@127.0.0.1:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://127.0.0.1%2523@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://127.0.0.1%23@example.com:${P}/`, layer: 'url', why: /credentials/ },
  { url: `http://example.com%40127.0.0.1:${P}/`, layer: 'url', why: /percent-encoding/ },
  { url: `http://%6c%6fcalhost:${P}/`, layer: 'url', why: /percent-encoding/ },
  { url: `http://example.com\\@127.0.0.1:${P}/`, layer: 'url', why: /backslash/ },
  { url: `http://127.0.0.1:${P}\\@example.com/`, layer: 'url', why: /backslash/ },
  { url: `http:127.0.0.1:${P}/`, layer: 'url', why: /scheme:\/\/host/ },
  { url: `http:/127.0.0.1:${P}/`, layer: 'url', why: /scheme:\/\/host/ },
  { url: `http:///127.0.0.1:${P}/`, layer: 'url', why: /scheme:\/\/host/ },
  { url: `http://127.0.\t0.1:${P}/`, layer: 'url', why: /control characters/ },
  { url: ` http://127.0.0.1:${P}/`, layer: 'url', why: /control characters/ },
  { url: `//127.0.0.1:${P}/`, layer: 'url', why: /absolute/ },
  { url: '', layer: 'url', why: /empty/ },
  { url: `http://example.com/${'a'.repeat(2100)}`, layer: 'url', why: /longer than 2048/ },
  // Non-http schemes
  { url: 'file:///etc/passwd', layer: 'url', why: /scheme "file"/ },
  { url: 'ftp://example.com/', layer: 'url', why: /scheme "ftp"/ },
  { url: `gopher://127.0.0.1:${P}/_GET%20/`, layer: 'url', why: /scheme "gopher"/ },
  { url: 'data:text/plain,hello', layer: 'url', why: /scheme "data"/ },
  { url: 'javascript:alert(1)', layer: 'url', why: /scheme "javascript"/ },
  { url: `ws://127.0.0.1:${P}/`, layer: 'url', why: /scheme "ws"/ },
  { url: `dict://127.0.0.1:${P}/info`, layer: 'url', why: /scheme "dict"/ },
  { url: `HTTPX://127.0.0.1:${P}/`, layer: 'url', why: /scheme "httpx"/ },
  // Names that pass the URL policy and resolve (injected resolver) to non-public addresses
  { url: `http://internal.test:${P}/`, layer: 'resolver', why: /internal\.test.*loopback/ },
  { url: `http://loopback-range.test:${P}/`, layer: 'resolver', why: /loopback/ },
  { url: `http://mixed.test:${P}/`, layer: 'resolver', why: /loopback/ },
  { url: `http://v6-loopback.test:${P}/`, layer: 'resolver', why: /loopback/ },
  { url: `http://mapped.test:${P}/`, layer: 'resolver', why: /IPv4-mapped/ },
  { url: `http://nat64.test:${P}/`, layer: 'resolver', why: /NAT64/ },
  { url: `http://sixtofour.test:${P}/`, layer: 'resolver', why: /6to4/ },
  { url: 'http://metadata.test/latest/meta-data', layer: 'resolver', why: /metadata/ },
  { url: 'http://ula.test/', layer: 'resolver', why: /unique local/ },
  { url: 'http://rfc1918.test/', layer: 'resolver', why: /RFC 1918/ },
  { url: 'http://cgnat.test/', layer: 'resolver', why: /carrier-grade NAT/ },
  { url: `http://zero.test:${P}/`, layer: 'resolver', why: /this network/ },
  { url: `https://example.com:${P}/`, layer: 'resolver', why: /loopback/ },
];

const withPort = (url: string): string => url.replaceAll(P, String(v4.port));
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

test('the table has at least 45 forms', (t) => {
  t.true(cases.length >= 45, String(cases.length));
});

for (const c of cases) {
  test(`refused without a connection: ${JSON.stringify(c.url.length > 80 ? `${c.url.slice(0, 60)}...` : c.url)}`, async (t) => {
    const url = withPort(c.url);
    const resolver = countingResolver();
    const upstream = createUpstream({ allowPrivate: false, resolver, connectTimeoutMs: 2000, maxTotalMs: 5000 });
    const before = accepted();
    try {
      const parsed = parseTargetUrl(url, { allowPrivate: false });
      t.is(parsed.ok, c.layer === 'resolver', 'URL policy verdict');

      const result = await upstream.request({ url });
      t.is(result.type, 'refused');
      if (result.type === 'refused') {
        t.regex(result.reason, c.why);
        // A refusal is a 400 BCK.ROUTER.0001 on the wire.
        const err = upstreamAppError(result);
        t.is(err.code, 'BCK.ROUTER.0001');
        t.is(err.httpStatus, 400);
      }
      if (c.layer === 'url') t.deepEqual(resolver.calls, [], 'refused before any lookup');
      else t.true(resolver.calls.length >= 1, 'refused after the lookup, before connecting');
      // The stream API applies the same guards.
      const streamed = await upstream.stream({ url });
      t.is(streamed.type, 'refused');
      await settle();
      t.is(accepted(), before, 'no connection reached the listener');
      t.is(accepted(), 0);
    } finally {
      await upstream.close();
    }
  });
}

test('resolver guard: every address is checked, in any order (public + private -> refused)', async (t) => {
  const opts = { allowPrivate: false, timeoutMs: 1000 };
  const answer = (addresses: string[]): Resolver => ({
    lookup: async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  });
  for (const addresses of [
    [PUBLIC, '127.0.0.1'],
    ['127.0.0.1', PUBLIC],
    [PUBLIC, '10.0.0.7'],
    [PUBLIC, '::ffff:169.254.169.254'],
    ['2606:4700:4700::1111', 'fd00::1'],
  ]) {
    const r = await resolveChecked('mixed.example', { ...opts, resolver: answer(addresses) });
    t.false(r.ok, addresses.join(','));
    if (!r.ok) {
      t.is(r.kind, 'refused');
      t.false(r.reason.includes(addresses[1] ?? ''), 'the private address is not echoed');
    }
  }
  const ok = await resolveChecked('public.example', { ...opts, resolver: answer([PUBLIC, '2606:4700:4700::1111']) });
  t.deepEqual(ok, {
    ok: true,
    addresses: [
      { address: PUBLIC, family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ],
  });
});

test('resolver guard: a broken, empty or hanging resolver fails closed', async (t) => {
  const opts = { allowPrivate: false, timeoutMs: 100 };
  const cases: [string, Resolver][] = [
    ['throws', { lookup: async () => Promise.reject(new Error('SERVFAIL')) }],
    ['empty', { lookup: async () => [] }],
    ['not an IP', { lookup: async () => [{ address: 'localhost', family: 4 }] }],
    ['bad family', { lookup: async () => JSON.parse('[{"address":"127.0.0.1","family":5}]') }],
    ['hangs', { lookup: () => new Promise<ResolvedAddress[]>(() => {}) }],
  ];
  for (const [label, resolver] of cases) {
    const r = await resolveChecked('x.example', { ...opts, resolver });
    t.false(r.ok, label);
    if (!r.ok) t.is(r.kind, 'failed', label);
  }
});

test('the same forms are reachable with allowPrivate (the listener does count connections)', async (t) => {
  const resolver = countingResolver();
  const upstream = createUpstream({ allowPrivate: true, resolver, connectTimeoutMs: 2000, maxTotalMs: 5000 });
  try {
    const before = control.accepted;
    for (const form of ['2130706433', '0177.0.0.1', '0x7f000001', '127.1', '[::ffff:127.0.0.1]', 'internal.test']) {
      const r = await upstream.request({ url: `http://${form}:${control.port}/` });
      t.is(r.type, 'response', form);
      if (r.type === 'response') t.is(r.status, 204, form);
    }
    t.is(control.accepted - before, 6);
    // A name is looked up once per connection, by our resolver only.
    t.deepEqual(resolver.calls, ['internal.test']);
  } finally {
    await upstream.close();
  }
});

test('numeric IPv4 spellings normalise to the dotted quad that is checked', (t) => {
  for (const [form, expected] of [
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['012.1', '10.0.0.1'],
    ['3232235777', '192.168.1.1'],
  ] as const) {
    const open = parseTargetUrl(`http://${form}/`, { allowPrivate: true });
    t.true(open.ok, form);
    if (open.ok) {
      t.is(open.host, expected, form);
      t.is(open.literalIp, expected, form);
    }
    t.false(parseTargetUrl(`http://${form}/`, { allowPrivate: false }).ok, form);
    t.false(classifyIp(expected).allowed, expected);
  }
});

test('allowPrivate still refuses schemes, credentials and malformed URLs', (t) => {
  for (const url of ['file:///etc/passwd', 'http://user:pass@127.0.0.1/', 'gopher://127.0.0.1/', 'http:127.0.0.1/', 'http://a\\@b/']) {
    t.false(parseTargetUrl(url, { allowPrivate: true }).ok, url);
  }
});

test('public targets pass the URL policy; the fragment is not kept', (t) => {
  const r = parseTargetUrl('https://api.Example.com:8443/v1/x?q=1#frag', { allowPrivate: false });
  t.true(r.ok);
  if (r.ok) {
    t.is(r.url.href, 'https://api.example.com:8443/v1/x?q=1');
    t.is(r.host, 'api.example.com');
    t.is(r.literalIp, undefined);
  }
  for (const url of ['http://8.8.8.8/', 'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/', 'http://[64:ff9b::808:808]/']) {
    t.true(parseTargetUrl(url, { allowPrivate: false }).ok, url);
  }
});
