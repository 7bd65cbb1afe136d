// SSRF table for the outbound module: every form below is refused by an upstream created without
// allowPrivate (what ROUTER_ALLOW_PRIVATE_TARGETS unset gives the proxy), as a refusal (400 BCK.ROUTER.0001), and
// no connection is made. A real TCP listener on 127.0.0.1 (and [::1] when the machine has it) counts accepted
// connections, and the injected resolver maps every name to loopback, so any leak through the policy would land
// on the listener and be counted. The positive controls at the end prove the listener does see connections.
// A second table runs with allowPrivate (ROUTER_ALLOW_PRIVATE_TARGETS=true): cloud metadata and link-local forms
// are still refused, with no connection, while loopback and RFC 1918 forms are reachable.
import test from 'ava';
import { type Listener, listen } from '../support/counting-listener.js';
import { classifyIp } from '../../shared/upstream/address-policy.js';
import { createUpstream } from '../../shared/upstream/client.js';
import { createGuardedConnector } from '../../shared/upstream/guarded-connect.js';
import { UpstreamRefusedError } from '../../shared/upstream/outcomes.js';
import { type ResolvedAddress, type Resolver, resolveChecked } from '../../shared/upstream/resolver.js';
import { upstreamAppError } from '../../shared/upstream/to-app-error.js';
import { parseTargetUrl } from '../../shared/upstream/url-policy.js';

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
  // Refused even with allowPrivate (metadata, link-local)
  'ecs.test': [{ address: '169.254.170.2', family: 4 }],
  'alibaba.test': [{ address: '100.100.100.200', family: 4 }],
  'link-local.test': [{ address: '169.254.10.10', family: 4 }],
  'imds6.test': [{ address: 'fd00:ec2::254', family: 6 }],
  'gcp6.test': [{ address: 'fd20:ce::254', family: 6 }],
  'mapped-metadata.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
  'nat64-metadata.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'sixtofour-metadata.test': [{ address: '2002:a9fe:a9fe::1', family: 6 }],
  // Loopback first: if the metadata address in the answer were not checked, the connector would open this one
  // first and the listener would count it.
  'loopback-then-metadata.test': [
    { address: '127.0.0.1', family: 4 },
    { address: '169.254.169.254', family: 4 },
  ],
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
  { url: 'http://metadata.google.internal/computeMetadata/v1/', layer: 'url', why: /metadata name/ },
  { url: 'http://metadata/computeMetadata/v1/', layer: 'url', why: /metadata name/ },
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

/**
 * Refused even with allowPrivate: cloud metadata (169.254.169.254 in every spelling WHATWG normalises, and its
 * mapped / NAT64 / 6to4 forms; ECS, EKS, Alibaba, Azure, AWS and GCP IPv6), link-local, and IPv6 forms that carry
 * an IPv4 address we do not decode. Same proof of "no connection" as above: nothing reaches the listener, the
 * URL-layer forms are refused before any lookup, the resolver-layer ones after the lookup and before a connect
 * (a connect to 169.254.169.254 from here would end as 'failed', not 'refused').
 */
const METADATA = /cloud instance metadata/;
const alwaysCases: Case[] = [
  { url: 'http://169.254.169.254/latest/meta-data/', layer: 'url', why: METADATA },
  { url: `http://169.254.169.254:${P}/latest/meta-data/`, layer: 'url', why: METADATA },
  { url: 'http://169.254.169.254./latest/meta-data/', layer: 'url', why: METADATA },
  { url: 'http://2852039166/latest/meta-data/', layer: 'url', why: METADATA },
  { url: 'http://0xa9fea9fe/latest/meta-data/', layer: 'url', why: METADATA },
  { url: 'http://0XA9FEA9FE/latest/meta-data/', layer: 'url', why: METADATA },
  { url: 'http://0xa9.0xfe.0xa9.0xfe/', layer: 'url', why: METADATA },
  { url: 'http://0251.0376.0251.0376/', layer: 'url', why: METADATA },
  { url: 'http://025177524776/', layer: 'url', why: METADATA },
  { url: 'http://169.254.43518/', layer: 'url', why: METADATA },
  { url: 'http://169.16689662/', layer: 'url', why: METADATA },
  { url: 'http://0251.0xfe.43518/', layer: 'url', why: METADATA },
  { url: 'http://１６９.２５４.１６９.２５４/', layer: 'url', why: METADATA },
  {
    url: 'http://[::ffff:169.254.169.254]/',
    layer: 'url',
    why: /IPv4-mapped.*169\.254\.169\.254.*cloud instance metadata/,
  },
  { url: 'http://[::ffff:a9fe:a9fe]/', layer: 'url', why: /IPv4-mapped.*cloud instance metadata/ },
  { url: 'http://[0:0:0:0:0:ffff:a9fe:a9fe]/', layer: 'url', why: /IPv4-mapped.*cloud instance metadata/ },
  { url: 'http://[64:ff9b::169.254.169.254]/', layer: 'url', why: /NAT64.*cloud instance metadata/ },
  { url: 'http://[64:ff9b::a9fe:a9fe]/', layer: 'url', why: /NAT64.*cloud instance metadata/ },
  { url: 'http://[2002:a9fe:a9fe::]/', layer: 'url', why: /6to4.*cloud instance metadata/ },
  { url: 'http://[2002:a9fe:a9fe:1::1]/', layer: 'url', why: /6to4.*cloud instance metadata/ },
  { url: 'http://[::169.254.169.254]/', layer: 'url', why: /IPv4-compatible/ },
  { url: 'http://[::ffff:0:a9fe:a9fe]/', layer: 'url', why: /IPv4-translated/ },
  { url: 'http://[64:ff9b:1:a9fe:a9:fe00::]/', layer: 'url', why: /local-use NAT64/ },
  // Teredo with client 169.254.169.254 (stored complemented, RFC 4380 §4: 0x5601_5601)
  { url: 'http://[2001:0:4136:e378:8000:63bf:5601:5601]/', layer: 'url', why: /Teredo/ },
  { url: 'http://169.254.170.2/v2/credentials/', layer: 'url', why: /ECS task metadata/ },
  { url: 'http://2852039170/v2/credentials/', layer: 'url', why: /ECS task metadata/ },
  { url: 'http://169.254.170.23/v1/credentials', layer: 'url', why: /EKS Pod Identity/ },
  { url: 'http://100.100.100.200/latest/meta-data/', layer: 'url', why: /Alibaba Cloud instance metadata/ },
  { url: 'http://1684301000/latest/meta-data/', layer: 'url', why: /Alibaba Cloud instance metadata/ },
  { url: 'http://0x646464c8/latest/meta-data/', layer: 'url', why: /Alibaba Cloud instance metadata/ },
  { url: 'http://[::ffff:100.100.100.200]/', layer: 'url', why: /IPv4-mapped.*Alibaba/ },
  { url: 'http://168.63.129.16/machine?comp=goalstate', layer: 'url', why: /Azure WireServer/ },
  { url: 'http://[fd00:ec2::254]/latest/meta-data/', layer: 'url', why: /AWS instance metadata/ },
  { url: 'http://[fd00:0ec2:0000::0254]/latest/meta-data/', layer: 'url', why: /AWS instance metadata/ },
  { url: 'http://[fd00:ec2::23]/v1/credentials', layer: 'url', why: /EKS Pod Identity/ },
  { url: 'http://[fd00:ec2::123]/', layer: 'url', why: /AWS instance services/ },
  { url: 'http://[fd20:ce::254]/computeMetadata/v1/', layer: 'url', why: /GCP instance metadata/ },
  { url: 'http://169.254.1.1/', layer: 'url', why: /link-local.*metadata/ },
  { url: 'http://169.254.0.23/', layer: 'url', why: /link-local.*metadata/ },
  { url: 'http://[fe80::1]/', layer: 'url', why: /link-local/ },
  { url: 'http://metadata.google.internal/computeMetadata/v1/', layer: 'url', why: /metadata name/ },
  { url: 'http://METADATA.google.internal./computeMetadata/v1/', layer: 'url', why: /metadata name/ },
  { url: 'http://metadata/computeMetadata/v1/', layer: 'url', why: /metadata name/ },
  { url: 'http://instance-data/latest/meta-data/', layer: 'url', why: /metadata name/ },
  // Names that pass the URL policy and resolve to metadata or link-local addresses
  { url: 'http://metadata.test/latest/meta-data/', layer: 'resolver', why: /metadata\.test.*cloud instance metadata/ },
  { url: 'http://ecs.test/v2/credentials/', layer: 'resolver', why: /ECS task metadata/ },
  { url: 'http://alibaba.test/latest/meta-data/', layer: 'resolver', why: /Alibaba/ },
  { url: 'http://link-local.test/', layer: 'resolver', why: /link-local/ },
  { url: 'http://imds6.test/latest/meta-data/', layer: 'resolver', why: /AWS instance metadata/ },
  { url: 'http://gcp6.test/computeMetadata/v1/', layer: 'resolver', why: /GCP instance metadata/ },
  { url: 'http://mapped-metadata.test/', layer: 'resolver', why: /IPv4-mapped.*cloud instance metadata/ },
  { url: 'http://nat64-metadata.test/', layer: 'resolver', why: /NAT64.*cloud instance metadata/ },
  { url: 'http://sixtofour-metadata.test/', layer: 'resolver', why: /6to4.*cloud instance metadata/ },
  { url: `http://loopback-then-metadata.test:${P}/`, layer: 'resolver', why: /cloud instance metadata/ },
];

for (const c of alwaysCases) {
  test(`refused without a connection even with allowPrivate: ${JSON.stringify(c.url)}`, async (t) => {
    const url = withPort(c.url);
    const resolver = countingResolver();
    const upstream = createUpstream({ allowPrivate: true, resolver, connectTimeoutMs: 2000, maxTotalMs: 5000 });
    const before = accepted();
    try {
      const parsed = parseTargetUrl(url, { allowPrivate: true });
      t.is(parsed.ok, c.layer === 'resolver', 'URL policy verdict');
      if (!parsed.ok) t.regex(parsed.reason, c.why);

      const result = await upstream.request({ url });
      t.is(result.type, 'refused');
      if (result.type === 'refused') {
        t.regex(result.reason, c.why);
        t.regex(result.reason, /not even with private targets allowed/);
        const err = upstreamAppError(result);
        t.is(err.code, 'BCK.ROUTER.0001');
        t.is(err.httpStatus, 400);
      }
      if (c.layer === 'url') t.deepEqual(resolver.calls, [], 'refused before any lookup');
      else t.true(resolver.calls.length >= 1, 'refused after the lookup, before connecting');
      const streamed = await upstream.stream({ url });
      t.is(streamed.type, 'refused');
      await settle();
      t.is(accepted(), before, 'no connection reached the listener');
    } finally {
      await upstream.close();
    }
  });
}

/** One call of the connector, as undici makes it, answered as a promise; a socket is closed at once. */
function connectOnce(hostname: string, port: number): Promise<Error | 'connected'> {
  const connector = createGuardedConnector({
    resolver: countingResolver(),
    allowPrivate: true,
    connectTimeoutMs: 2000,
  });
  return new Promise((resolve) => {
    connector({ hostname, host: hostname, protocol: 'http:', port: String(port) }, (err, socket) => {
      socket?.destroy();
      resolve(err ?? 'connected');
    });
  });
}

test('connect-time guard alone (URL policy bypassed): metadata literals and names are refused with allowPrivate', async (t) => {
  const before = accepted();
  for (const host of [
    '169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '100.100.100.200',
    'fd00:ec2::254',
    'metadata.test',
    'loopback-then-metadata.test',
  ]) {
    const r = await connectOnce(host, v4.port);
    t.true(r instanceof UpstreamRefusedError, host);
    if (r instanceof UpstreamRefusedError) t.regex(r.reason, /metadata/, host);
  }
  t.is(accepted(), before, 'no connection reached the listener');
  // The same connector does connect to loopback and to a name resolving to it (own listener: tests run
  // concurrently and the shared control listener is counted by another one).
  const own = await listen('127.0.0.1');
  try {
    t.is(await connectOnce('127.0.0.1', own.port), 'connected');
    t.is(await connectOnce('internal.test', own.port), 'connected');
    await settle();
    t.is(own.accepted, 2);
  } finally {
    own.server.close();
  }
});

test('resolver guard with allowPrivate: private answers pass, any metadata address in the answer is refused', async (t) => {
  const opts = { allowPrivate: true, timeoutMs: 1000 };
  const answer = (addresses: string[]): Resolver => ({
    lookup: async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  });
  for (const addresses of [
    ['127.0.0.1'],
    ['::1'],
    ['10.1.2.3', '192.168.1.1', '172.16.0.1'],
    ['fd12:3456::1', '100.64.0.1'],
    [PUBLIC, '::ffff:127.0.0.1'],
  ]) {
    const r = await resolveChecked('private.example', { ...opts, resolver: answer(addresses) });
    t.true(r.ok, addresses.join(','));
  }
  for (const addresses of [
    ['169.254.169.254'],
    ['127.0.0.1', '169.254.169.254'],
    ['10.0.0.7', '::ffff:169.254.169.254'],
    [PUBLIC, '64:ff9b::a9fe:a9fe'],
    ['fd12:3456::1', 'fd00:ec2::254'],
    ['169.254.170.2'],
    ['100.100.100.200'],
    ['169.254.3.4'],
  ]) {
    const r = await resolveChecked('metadata.example', { ...opts, resolver: answer(addresses) });
    t.false(r.ok, addresses.join(','));
    if (!r.ok) {
      t.is(r.kind, 'refused');
      t.regex(r.reason, /metadata\.example.*never a target/);
    }
  }
  // An IP literal handed straight to the guard is checked the same way.
  t.true((await resolveChecked('10.0.0.1', { ...opts, resolver: answer([]) })).ok);
  t.false((await resolveChecked('169.254.169.254', { ...opts, resolver: answer([]) })).ok);
});

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
    // Metadata refusals first, on the same upstream: they must not stop the control forms below from connecting.
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.test/',
      'http://[fd00:ec2::254]/',
    ]) {
      t.is((await upstream.request({ url })).type, 'refused', url);
    }
    const before = control.accepted;
    const forms = [
      '2130706433',
      '0177.0.0.1',
      '0x7f000001',
      '127.1',
      '[::ffff:127.0.0.1]',
      'internal.test',
      'localhost',
      '127.0.0.1',
    ];
    for (const form of forms) {
      const r = await upstream.request({ url: `http://${form}:${control.port}/` });
      t.is(r.type, 'response', form);
      if (r.type === 'response') t.is(r.status, 204, form);
    }
    t.is(control.accepted - before, forms.length);
    // A name is looked up once per connection, by our resolver only.
    t.deepEqual(resolver.calls, ['metadata.test', 'internal.test', 'localhost']);
  } finally {
    await upstream.close();
  }
});

test('with allowPrivate, loopback, RFC 1918, CGNAT and ULA stay open in both policy layers', async (t) => {
  for (const ip of [
    '127.0.0.1',
    '127.4.5.6',
    '::1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    'fd12:3456::1',
    '::ffff:10.0.0.1',
  ]) {
    t.true(classifyIp(ip, { allowPrivate: true }).allowed, ip);
    t.false(classifyIp(ip).allowed, ip);
    t.true(parseTargetUrl(`http://${ip.includes(':') ? `[${ip}]` : ip}/`, { allowPrivate: true }).ok, ip);
  }
  for (const name of ['localhost', 'rfc1918.test', 'ula.test', 'cgnat.test', 'loopback-range.test']) {
    const r = await resolveChecked(name, { resolver: countingResolver(), allowPrivate: true, timeoutMs: 1000 });
    t.true(r.ok, name);
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
  // Metadata spellings normalise too, and the normalised address is what is refused, in both modes.
  for (const [form, expected] of [
    ['0xa9fea9fe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['169.254.43518', '169.254.169.254'],
    ['169.16689662', '169.254.169.254'],
    ['2852039170', '169.254.170.2'],
    ['1684301000', '100.100.100.200'],
  ] as const) {
    for (const allowPrivate of [true, false]) {
      const r = parseTargetUrl(`http://${form}/`, { allowPrivate });
      t.false(r.ok, form);
      if (!r.ok)
        t.regex(
          r.reason,
          new RegExp(`^the address ${expected.replaceAll('.', '\\.')} is never a target.*metadata`),
          form,
        );
    }
  }
});

test('allowPrivate still refuses schemes, credentials and malformed URLs', (t) => {
  for (const url of [
    'file:///etc/passwd',
    'http://user:pass@127.0.0.1/',
    'gopher://127.0.0.1/',
    'http:127.0.0.1/',
    'http://a\\@b/',
  ]) {
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
  for (const url of [
    'http://8.8.8.8/',
    'http://[2606:4700:4700::1111]/',
    'http://[::ffff:8.8.8.8]/',
    'http://[64:ff9b::808:808]/',
  ]) {
    t.true(parseTargetUrl(url, { allowPrivate: false }).ok, url);
  }
});
