// Which IP addresses the router may connect to on a user's behalf. The threat is server-side request forgery: a
// caller names a URL and we open the connection from inside our network, so anything that is not a public unicast
// address (loopback, private networks, link-local cloud metadata, our own admin port, ...) must be refused.
//
// The tables follow the IANA special-purpose address registries (RFC 6890, updated by RFC 8190) plus the cloud
// metadata endpoints that sit inside otherwise-public space. Matching is longest-prefix on integers (ip-bits.ts),
// so a /32 metadata entry wins over the /16 around it and gives the more useful reason.
import { type IpBits, formatIpv4, inPrefix, parseIp } from './ip-bits.js';

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * `refuse`: never a target. `embeds-ipv4`: an IPv6 form that carries an IPv4 address which is what the packets
 * really reach (mapped, NAT64, 6to4): the verdict is that of the embedded address, found `shift` bits up.
 */
type Rule =
  | { kind: 'refuse'; prefix: bigint; bits: number; reason: string }
  | { kind: 'embeds-ipv4'; prefix: bigint; bits: number; reason: string; shift: bigint };

function cidr(text: string): { prefix: bigint; bits: number; family: 4 | 6 } {
  const [address = '', bits = ''] = text.split('/');
  const parsed = parseIp(address);
  if (parsed === null) throw new Error(`bad CIDR in address policy: ${text}`);
  return { prefix: parsed.value, bits: Number(bits), family: parsed.family };
}

const refuse = (text: string, reason: string): Rule => ({ kind: 'refuse', ...cidr(text), reason });
const embeds = (text: string, reason: string, shift: bigint): Rule => ({ kind: 'embeds-ipv4', ...cidr(text), reason, shift });

/** Longest prefix first, so the most specific reason is reported. */
const byLength = (rules: Rule[]): Rule[] => [...rules].sort((a, b) => b.bits - a.bits);

const IPV4_RULES = byLength([
  refuse('0.0.0.0/8', '"this network" (RFC 791, RFC 6890 §2.2.2); 0.0.0.0 reaches the local host on Linux'),
  refuse('10.0.0.0/8', 'private-use (RFC 1918)'),
  refuse('100.64.0.0/10', 'shared address space / carrier-grade NAT (RFC 6598)'),
  refuse('100.100.100.200/32', 'Alibaba Cloud instance metadata'),
  refuse('127.0.0.0/8', 'loopback (RFC 1122 §3.2.1.3)'),
  refuse('169.254.0.0/16', 'link-local (RFC 3927)'),
  refuse('169.254.169.254/32', 'cloud instance metadata (AWS, GCP, Azure, OpenStack; link-local, RFC 3927)'),
  refuse('168.63.129.16/32', 'Azure WireServer (platform-internal virtual address)'),
  refuse('172.16.0.0/12', 'private-use (RFC 1918)'),
  refuse('192.0.0.0/24', 'IETF protocol assignments (RFC 6890 §2.2.2)'),
  refuse('192.0.2.0/24', 'documentation TEST-NET-1 (RFC 5737)'),
  refuse('192.88.99.0/24', '6to4 relay anycast (RFC 3068, deprecated by RFC 7526)'),
  refuse('192.168.0.0/16', 'private-use (RFC 1918)'),
  refuse('198.18.0.0/15', 'benchmarking (RFC 2544)'),
  refuse('198.51.100.0/24', 'documentation TEST-NET-2 (RFC 5737)'),
  refuse('203.0.113.0/24', 'documentation TEST-NET-3 (RFC 5737)'),
  refuse('224.0.0.0/4', 'multicast (RFC 5771)'),
  refuse('240.0.0.0/4', 'reserved (RFC 1112 §4)'),
  refuse('255.255.255.255/32', 'limited broadcast (RFC 919, RFC 8190)'),
]);

const IPV6_RULES = byLength([
  refuse('::/128', 'unspecified (RFC 4291 §2.5.2)'),
  refuse('::1/128', 'loopback (RFC 4291 §2.5.3)'),
  // The last 32 bits of these forms are an IPv4 address that the packets really reach.
  embeds('::ffff:0:0/96', 'IPv4-mapped (RFC 4291 §2.5.5.2)', 0n),
  embeds('64:ff9b::/96', 'NAT64 well-known prefix (RFC 6052 §2.1)', 0n),
  // 6to4 carries the IPv4 address in bits 16..47 (RFC 3056 §2).
  embeds('2002::/16', '6to4 (RFC 3056)', 80n),
  refuse('::/96', 'IPv4-compatible, deprecated (RFC 4291 §2.5.5.1)'),
  refuse('64:ff9b:1::/48', 'local-use NAT64 prefix (RFC 8215)'),
  refuse('100::/64', 'discard-only (RFC 6666)'),
  refuse('2001::/23', 'IETF protocol assignments (RFC 2928, RFC 6890 §2.2.3)'),
  // Teredo hides an obfuscated IPv4 address and relays through a Teredo server: refused rather than decoded.
  refuse('2001::/32', 'Teredo (RFC 4380)'),
  refuse('2001:db8::/32', 'documentation (RFC 3849)'),
  refuse('3fff::/20', 'documentation (RFC 9637)'),
  refuse('fc00::/7', 'unique local (RFC 4193)'),
  refuse('fd00:ec2::254/128', 'AWS instance metadata (IPv6; unique local, RFC 4193)'),
  refuse('fe80::/10', 'link-local (RFC 4291 §2.5.6)'),
  refuse('fec0::/10', 'site-local, deprecated (RFC 3879)'),
  refuse('ff00::/8', 'multicast (RFC 4291 §2.7)'),
]);

/** Global unicast (RFC 4291 §2.4, IANA IPv6 address space): everything outside it is unallocated or special. */
const GLOBAL_UNICAST = cidr('2000::/3');

function firstMatch(rules: Rule[], ip: IpBits, width: number): Rule | undefined {
  return rules.find((r) => inPrefix(ip.value, r.prefix, r.bits, width));
}

function classifyBits(ip: IpBits): AddressVerdict {
  if (ip.family === 4) {
    const rule = firstMatch(IPV4_RULES, ip, 32);
    return rule === undefined ? { allowed: true } : { allowed: false, reason: rule.reason };
  }
  const rule = firstMatch(IPV6_RULES, ip, 128);
  if (rule?.kind === 'embeds-ipv4') {
    const embedded = (ip.value >> rule.shift) & 0xffff_ffffn;
    const verdict = classifyBits({ family: 4, value: embedded });
    if (verdict.allowed) return verdict;
    return { allowed: false, reason: `${rule.reason} form of ${formatIpv4(embedded)}: ${verdict.reason}` };
  }
  if (rule !== undefined) return { allowed: false, reason: rule.reason };
  if (!inPrefix(ip.value, GLOBAL_UNICAST.prefix, GLOBAL_UNICAST.bits, 128)) {
    return { allowed: false, reason: 'outside IPv6 global unicast 2000::/3 (RFC 4291 §2.4)' };
  }
  return { allowed: true };
}

/**
 * Whether a connection to this address may be opened for a caller. Takes a canonical literal (dotted-quad IPv4 or
 * RFC 4291 IPv6 text, no brackets); anything else, including zone-scoped IPv6, is refused. Never throws.
 */
export function classifyIp(ip: string): AddressVerdict {
  if (typeof ip !== 'string') return { allowed: false, reason: 'not an IP address' };
  const parsed = parseIp(ip);
  if (parsed === null) return { allowed: false, reason: 'not an IP address' };
  return classifyBits(parsed);
}
