// Property tests for the outbound policies (parsers of untrusted input): they never throw on hostile strings, every
// spelling of a 127/8 address is refused, every spelling of a cloud metadata or link-local address is refused even
// with allowPrivate, and the integer range tables agree with node:net's BlockList as an independent reference.
// FUZZ_RUNS (default 1,000; 10,000 in `npm run test:fuzz`).
import { BlockList, isIP } from 'node:net';
import test from 'ava';
import fc from 'fast-check';
import { classifyIp } from '../../shared/upstream/address-policy.js';
import { REQUEST_DROPPED, REQUEST_DROPPED_PREFIXES, scrubRequestHeaders } from '../../shared/upstream/headers.js';
import { resolveChecked } from '../../shared/upstream/resolver.js';
import { parseTargetUrl } from '../../shared/upstream/url-policy.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 1000);

/** Strings with a bias towards URL and address syntax. */
const urlish = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc
    .tuple(
      fc.constantFrom('http://', 'https://', 'HTTP://', 'http:', 'file://', '//', 'gopher://', ''),
      fc.string({ unit: fc.constantFrom(...'[]:@%.0123456789abcdefx/\\#?-_~ \t'.split('')), maxLength: 40 }),
    )
    .map(([a, b]) => a + b),
  fc.ipV4().map((ip) => `http://${ip}/`),
  fc.ipV6().map((ip) => `http://[${ip}]/`),
);

test('parseTargetUrl never throws and always answers with ok true or false', (t) => {
  fc.assert(
    fc.property(urlish, fc.boolean(), (raw, allowPrivate) => {
      const r = parseTargetUrl(raw, { allowPrivate });
      if (r.ok) {
        // Whatever passes is http(s), credential-free, fragment-free, and at most 2048 characters as written.
        return (
          (r.url.protocol === 'http:' || r.url.protocol === 'https:') &&
          r.url.username === '' &&
          r.url.password === '' &&
          r.url.hash === '' &&
          raw.length <= 2048
        );
      }
      return typeof r.reason === 'string' && r.reason.length > 0;
    }),
    { numRuns },
  );
  t.pass();
});

test('parseTargetUrl never throws on values that are not strings', (t) => {
  fc.assert(
    fc.property(fc.anything(), (raw) => parseTargetUrl(raw as string, { allowPrivate: false }).ok === false),
    { numRuns },
  );
  t.pass();
});

test('classifyIp never throws on arbitrary strings and refuses what is not a canonical literal', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.ipV4Extended(), fc.anything()), (s) => {
      const v = classifyIp(s as string);
      return typeof v.allowed === 'boolean' && (typeof s === 'string' && isIP(s) !== 0 ? true : !v.allowed);
    }),
    { numRuns },
  );
  t.pass();
});

/** One octet, or a run of octets joined into one number, written in decimal, octal or hex (WHATWG IPv4 parser). */
const spell = (value: number): fc.Arbitrary<string> =>
  fc.constantFrom(
    String(value),
    `0${value.toString(8)}`,
    `0x${value.toString(16)}`,
    `0X${value.toString(16).toUpperCase()}`,
    `0x${value.toString(16).padStart(8, '0')}`,
  );

/** Every numeric form of a.b.c.d: a.b.c.d, a.b.N16, a.N24, N32, each part in any base. */
const numericForm = (a: number, b: number, c: number, d: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.tuple(spell(a), spell(b), spell(c), spell(d)).map((p) => p.join('.')),
    fc.tuple(spell(a), spell(b), spell(c * 256 + d)).map((p) => p.join('.')),
    fc.tuple(spell(a), spell(b * 65536 + c * 256 + d)).map((p) => p.join('.')),
    spell(a * 16777216 + b * 65536 + c * 256 + d),
  );

const octet = fc.integer({ min: 0, max: 255 });

/** Every numeric form of a 127/8 address, maybe with a trailing dot. */
const loopbackForm = fc
  .tuple(octet, octet, octet)
  .chain(([b, c, d]) => fc.tuple(numericForm(127, b, c, d), fc.boolean(), fc.constant(`127.${b}.${c}.${d}`)));

/**
 * Addresses refused even with allowPrivate, as dotted quads: the metadata endpoints themselves (weighted, so every
 * run sees them in many spellings), and any address of the link-local 169.254.0.0/16.
 */
const alwaysRefusedV4 = fc.oneof(
  fc.constantFrom('169.254.169.254', '169.254.170.2', '169.254.170.23', '100.100.100.200', '168.63.129.16'),
  fc.tuple(octet, octet).map(([c, d]) => `169.254.${c}.${d}`),
);

/** A numeric spelling of an always-refused address, with the dotted quad it must normalise to. */
const alwaysRefusedForm = alwaysRefusedV4.chain((dotted) => {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return fc.tuple(numericForm(a, b, c, d), fc.boolean(), fc.constant(dotted));
});

test('any IPv4 in 127/8, in any numeric form, is refused; with allowPrivate it normalises to the dotted quad', (t) => {
  fc.assert(
    fc.property(loopbackForm, fc.nat({ max: 65535 }), ([form, trailingDot, dotted], port) => {
      const url = `http://${form}${trailingDot ? '.' : ''}:${port}/x`;
      const closed = parseTargetUrl(url, { allowPrivate: false });
      const open = parseTargetUrl(url, { allowPrivate: true });
      return (
        !closed.ok && /loopback/.test(closed.reason) && open.ok && open.host === dotted && open.literalIp === dotted
      );
    }),
    { numRuns },
  );
  t.pass();
});

test('any spelling of a metadata or link-local IPv4 address is refused, with and without allowPrivate', (t) => {
  fc.assert(
    fc.property(
      alwaysRefusedForm,
      fc.option(fc.nat({ max: 65535 })),
      fc.boolean(),
      ([form, trailingDot, dotted], port, allowPrivate) => {
        const url = `http://${form}${trailingDot ? '.' : ''}${port === null ? '' : `:${port}`}/latest/meta-data/`;
        const r = parseTargetUrl(url, { allowPrivate });
        // Refused under the normalised address, with a reason that says why even private mode does not open it.
        return !r.ok && r.reason.startsWith(`the address ${dotted} is never a target`) && /metadata/.test(r.reason);
      },
    ),
    { numRuns },
  );
  t.pass();
});

const hex16 = (n: number): string => n.toString(16);

/** The IPv6 forms that carry an IPv4 address: mapped (both notations), NAT64 (both), 6to4, compatible, translated. */
function ipv6Forms(ip: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
  const hi = hex16(a * 256 + b);
  const lo = hex16(c * 256 + d);
  return [
    `::ffff:${ip}`,
    `::ffff:${hi}:${lo}`,
    `64:ff9b::${ip}`,
    `64:ff9b::${hi}:${lo}`,
    `2002:${hi}:${lo}::1`,
    `::${hi}:${lo}`,
    `::ffff:0:${hi}:${lo}`,
  ];
}

test('IPv6 forms carrying a metadata or link-local IPv4 address are refused with allowPrivate, in both layers', async (t) => {
  await fc.assert(
    fc.asyncProperty(alwaysRefusedV4, async (ip) => {
      for (const form of ipv6Forms(ip)) {
        if (classifyIp(form, { allowPrivate: true }).allowed) return false;
        if (parseTargetUrl(`http://[${form}]/`, { allowPrivate: true }).ok) return false;
        const resolver = { lookup: async () => [{ address: form, family: 6 as const }] };
        const r = await resolveChecked('carrier.example', { resolver, allowPrivate: true, timeoutMs: 1000 });
        if (r.ok || r.kind !== 'refused') return false;
      }
      return true;
    }),
    { numRuns },
  );
  t.pass();
});
test('IPv6 forms that embed a 127/8 address (mapped, NAT64, 6to4, compatible) are refused', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffffff }), fc.nat({ max: 3 }), (low24, kind) => {
      const v4 = 0x7f000000 + low24;
      const hi = hex16(v4 >>> 16);
      const lo = hex16(v4 & 0xffff);
      const ip = [`::ffff:${hi}:${lo}`, `64:ff9b::${hi}:${lo}`, `2002:${hi}:${lo}::1`, `::${hi}:${lo}`][kind] ?? '';
      return !classifyIp(ip).allowed && !parseTargetUrl(`http://[${ip}]/`, { allowPrivate: false }).ok;
    }),
    { numRuns },
  );
  t.pass();
});

/** The IPv4 table rebuilt with node:net BlockList: an independent implementation of the same ranges. */
const reference = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
  ['168.63.129.16', 32],
] as const) {
  reference.addSubnet(net, bits, 'ipv4');
}

test('IPv4 verdicts agree with a BlockList reference, and mapped / NAT64 / 6to4 forms agree with IPv4', (t) => {
  fc.assert(
    fc.property(fc.ipV4(), (ip) => {
      const v = classifyIp(ip).allowed;
      const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
      const hi = hex16(a * 256 + b);
      const lo = hex16(c * 256 + d);
      return (
        v === !reference.check(ip, 'ipv4') &&
        classifyIp(`::ffff:${ip}`).allowed === v &&
        classifyIp(`64:ff9b::${hi}:${lo}`).allowed === v &&
        classifyIp(`2002:${hi}:${lo}::`).allowed === v
      );
    }),
    { numRuns },
  );
  t.pass();
});

/** What allowPrivate leaves refused among IPv4 addresses: metadata endpoints and link-local (independent table). */
const alwaysReference = new BlockList();
for (const [net, bits] of [
  ['169.254.0.0', 16],
  ['100.100.100.200', 32],
  ['168.63.129.16', 32],
] as const) {
  alwaysReference.addSubnet(net, bits, 'ipv4');
}

test('with allowPrivate, IPv4 is refused exactly on metadata / link-local, and embedded forms agree', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.ipV4(), alwaysRefusedV4), (ip) => {
      const v = classifyIp(ip, { allowPrivate: true }).allowed;
      const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
      const hi = hex16(a * 256 + b);
      const lo = hex16(c * 256 + d);
      return (
        v === !alwaysReference.check(ip, 'ipv4') &&
        // Never more open than without allowPrivate.
        (v || !classifyIp(ip).allowed) &&
        classifyIp(`::ffff:${ip}`, { allowPrivate: true }).allowed === v &&
        classifyIp(`64:ff9b::${hi}:${lo}`, { allowPrivate: true }).allowed === v &&
        classifyIp(`2002:${hi}:${lo}::`, { allowPrivate: true }).allowed === v
      );
    }),
    { numRuns },
  );
  t.pass();
});

test('allowPrivate never opens an address that is refused as metadata, and private mode only widens', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
      const strict = classifyIp(ip);
      const open = classifyIp(ip, { allowPrivate: true });
      if (open.allowed) return true;
      // Whatever private mode refuses, strict mode refuses too, for the same reason, marked `always`.
      return !strict.allowed && strict.always && open.always && strict.reason === open.reason;
    }),
    { numRuns },
  );
  t.pass();
});

test('IPv6 outside 2000::/3 is never allowed; documentation, Teredo, ULA, link-local and multicast never are', (t) => {
  const refusedPrefixes = new BlockList();
  for (const [net, bits] of [
    ['2001::', 23],
    ['2001:db8::', 32],
    ['3fff::', 20],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const) {
    refusedPrefixes.addSubnet(net, bits, 'ipv6');
  }
  const global = new BlockList();
  global.addSubnet('2000::', 3, 'ipv6');
  const embedding = new BlockList();
  embedding.addSubnet('::ffff:0:0', 96, 'ipv6');
  embedding.addSubnet('64:ff9b::', 96, 'ipv6');
  fc.assert(
    fc.property(fc.ipV6(), (ip) => {
      const v = classifyIp(ip).allowed;
      if (refusedPrefixes.check(ip, 'ipv6')) return !v;
      if (!global.check(ip, 'ipv6') && !embedding.check(ip, 'ipv6')) return !v;
      return true;
    }),
    { numRuns },
  );
  t.pass();
});

test('resolver guard with allowPrivate: refused exactly when some resolved address is metadata or link-local', async (t) => {
  const address = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    alwaysRefusedV4,
    fc.constantFrom('127.0.0.1', '::1', '10.0.0.1', '::ffff:169.254.169.254', 'fd00:ec2::254'),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(address, { minLength: 1, maxLength: 6 }), async (addresses) => {
      const resolver = {
        lookup: async () =>
          addresses.map((a) => ({ address: a, family: a.includes(':') ? (6 as const) : (4 as const) })),
      };
      const r = await resolveChecked('fuzz.example', { resolver, allowPrivate: true, timeoutMs: 1000 });
      const anyAlways = addresses.some((a) => !classifyIp(a, { allowPrivate: true }).allowed);
      const anyV4Reference = addresses.some((a) => !a.includes(':') && alwaysReference.check(a, 'ipv4'));
      return r.ok === !anyAlways && (!anyV4Reference || !r.ok) && (r.ok || r.kind === 'refused');
    }),
    { numRuns },
  );
  t.pass();
});

test('resolver guard: refused exactly when some resolved address is not public', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 6 }), async (addresses) => {
      const resolver = {
        lookup: async () =>
          addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) })),
      };
      const r = await resolveChecked('fuzz.example', { resolver, allowPrivate: false, timeoutMs: 1000 });
      const anyBad = addresses.some((a) => !classifyIp(a).allowed);
      return r.ok === !anyBad && (r.ok || r.kind === 'refused');
    }),
    { numRuns },
  );
  t.pass();
});

const headerName = fc
  .oneof(
    fc.constantFrom(
      ...Object.keys(REQUEST_DROPPED),
      'x-router-target-url',
      'X-Forwarded-For',
      'x-custom',
      'accept',
      'AUTHORIZATION',
      'Cookie',
      '__proto__',
    ),
    fc.string({ minLength: 1, maxLength: 12 }),
  )
  .chain((n) => fc.constantFrom(n, n.toUpperCase(), n.toLowerCase()));
const headerValue = fc.oneof(fc.string({ maxLength: 30 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }));

test('scrubRequestHeaders never throws, never lets a dropped header through, and keeps every other one', (t) => {
  fc.assert(
    fc.property(
      fc.dictionary(headerName, headerValue, { maxKeys: 12 }),
      fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
      (headers, auth) => {
        const r = scrubRequestHeaders(headers, { upstreamAuthorization: auth });
        if (!r.ok) return r.reason.length > 0;
        const connectionNamed = Object.entries(headers)
          .filter(([k]) => k.toLowerCase() === 'connection')
          .flatMap(([, v]) => (Array.isArray(v) ? v : [v]))
          .flatMap((v) => String(v).split(','))
          .map((s) => s.trim().toLowerCase());
        for (const name of Object.keys(r.headers)) {
          if (name !== name.toLowerCase()) return false;
          if (name === 'authorization') {
            if (r.headers[name] !== auth) return false;
            continue;
          }
          if (Object.hasOwn(REQUEST_DROPPED, name)) return false;
          if (Object.keys(REQUEST_DROPPED_PREFIXES).some((p) => name.startsWith(p))) return false;
          if (connectionNamed.includes(name)) return false;
        }
        // Name verdicts are memoised: whatever came before, every header that may pass is there, and the record is
        // a plain object (a `__proto__` field must not become its prototype).
        if (Object.getPrototypeOf(r.headers) !== Object.prototype) return false;
        for (const [raw, v] of Object.entries(headers)) {
          const name = raw.toLowerCase();
          const hasValue = typeof v === 'string' || (Array.isArray(v) && v.length > 0);
          const dropped =
            name === '__proto__' ||
            Object.hasOwn(REQUEST_DROPPED, name) ||
            Object.keys(REQUEST_DROPPED_PREFIXES).some((p) => name.startsWith(p)) ||
            connectionNamed.includes(name);
          if (hasValue && !dropped && !Object.hasOwn(r.headers, name)) return false;
        }
        return true;
      },
    ),
    { numRuns },
  );
  t.pass();
});
