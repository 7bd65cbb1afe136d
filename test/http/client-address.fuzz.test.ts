// The client address of the per-address limits (shared/client-address.ts) is read from what a client sends
// (X-Forwarded-For behind trusted hops, the vouching header on the admin port): any value is an address or the
// peer, never a throw; only a header signed with the deployment's key is believed; and an IPv6 client counts by
// its /64 whatever address of it it picks.
import test from 'ava';
import fc from 'fast-check';
import {
  UNKNOWN_ADDRESS,
  addressBucket,
  clientAddressOf,
  normalizeAddress,
  readClientAddress,
  stampClientAddress,
} from '../../shared/client-address.js';
import { secretBox } from '../../shared/crypto/secrets.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const box = secretBox('k'.repeat(40));
const otherBox = secretBox('o'.repeat(40));

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
const anyText = fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[0-9a-fA-F:., \t[\]%]{0,60}$/));
const entry = fc.oneof(ipv4, ipv6, anyText);

test('normalizeAddress: an IP literal gets one spelling (idempotent, no space), anything else undefined', (t) => {
  fc.assert(
    fc.property(fc.oneof(ipv4, ipv6, anyText), (raw) => {
      const n = normalizeAddress(raw);
      if (n === undefined) return true;
      return normalizeAddress(n) === n && !n.includes(' ') && !n.includes('::');
    }),
    { numRuns: RUNS },
  );
  t.is(normalizeAddress('::ffff:192.0.2.7'), '192.0.2.7');
  t.is(normalizeAddress('::FFFF:c000:207'), '192.0.2.7');
  t.is(normalizeAddress('2001:DB8::1'), '2001:db8:0:0:0:0:0:1');
  for (const bad of ['', ' ', '192.0.2', '01.2.3.4', 'fe80::1%eth0', '[::1]', '1.2.3.4:80', 'localhost'])
    t.is(normalizeAddress(bad), undefined, bad);
});

test('clientAddressOf: never throws; with no trusted hop the peer alone, else the entry that many from the right or the peer', (t) => {
  fc.assert(
    fc.property(
      fc.option(fc.oneof(ipv4, ipv6, anyText), { nil: undefined }),
      fc.option(
        fc.oneof(
          fc.array(entry, { maxLength: 6 }).map((xs) => xs.join(',')),
          fc.array(anyText),
        ),
        {
          nil: undefined,
        },
      ),
      fc.integer({ min: 0, max: 10 }),
      (peer, xff, hops) => {
        const got = clientAddressOf(peer, xff, hops);
        const own = normalizeAddress(peer) ?? UNKNOWN_ADDRESS;
        if (hops === 0 || xff === undefined) return got === own;
        const entries = (typeof xff === 'string' ? [xff] : xff).flatMap((h) => h.split(','));
        const believed = entries.length >= hops ? normalizeAddress(entries[entries.length - hops]) : undefined;
        return got === (believed ?? own);
      },
    ),
    { numRuns: RUNS },
  );
  // What a client writes left of the trusted hop's entry is never believed.
  t.is(clientAddressOf('10.0.0.1', '6.6.6.6, 198.51.100.9', 1), '198.51.100.9');
  t.is(clientAddressOf('10.0.0.1', ['6.6.6.6', '198.51.100.9, 10.0.0.2'], 2), '198.51.100.9');
  t.is(clientAddressOf('10.0.0.1', '6.6.6.6, 198.51.100.9', 0), '10.0.0.1');
  t.is(clientAddressOf(undefined, undefined, 0), UNKNOWN_ADDRESS);
});

test('readClientAddress: only a header this deployment signed is believed, for exactly the address it signed', (t) => {
  fc.assert(
    fc.property(fc.oneof(ipv4, ipv6), anyText, (raw, noise) => {
      const address = normalizeAddress(raw) ?? '';
      const stamped = stampClientAddress(box, address);
      const [, mac = ''] = stamped.split(' ');
      return (
        readClientAddress(box, stamped) === address &&
        readClientAddress(otherBox, stamped) === undefined &&
        readClientAddress(box, `${address} ${mac}x`) === undefined &&
        readClientAddress(box, `${address}1 ${mac}`) === undefined &&
        readClientAddress(box, `${stamped} ${noise}`) === undefined &&
        (readClientAddress(box, noise) === undefined || noise === stamped)
      );
    }),
    { numRuns: RUNS },
  );
  t.is(readClientAddress(box, undefined), undefined);
  t.is(readClientAddress(box, ''), undefined);
});

test('addressBucket: IPv4 itself; every IPv6 address of one /64 in one bucket, another /64 in another', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
      fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }),
      fc.integer({ min: 0, max: 3 }),
      (groups, host, flip) => {
        const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
        const moved = [...groups];
        moved[flip] = ((moved[flip] ?? 0) + 1) % 0x10000;
        const norm = (xs: number[]) => normalizeAddress(hex(xs)) ?? '';
        const [a, sameBlock, other] = [norm(groups), norm([...groups.slice(0, 4), ...host]), norm(moved)];
        // An IPv4-mapped address is IPv4 (its own bucket): not this property's case.
        fc.pre(![a, sameBlock, other].some((x) => x.includes('.')));
        return addressBucket(a) === addressBucket(sameBlock) && addressBucket(a) !== addressBucket(other);
      },
    ),
    { numRuns: RUNS },
  );
  t.is(addressBucket('192.0.2.7'), '192.0.2.7');
  t.is(addressBucket('2001:db8:1:2:0:0:0:1'), '2001:db8:1:2::/64');
  t.is(addressBucket(UNKNOWN_ADDRESS), UNKNOWN_ADDRESS);
});
