// Which IP addresses the router may connect to on a user's behalf. The threat is server-side request forgery: a
// caller names a URL and we open the connection from inside our network, so anything that is not a public unicast
// address (loopback, private networks, link-local cloud metadata, our own admin port, ...) must be refused.
//
// The tables follow the IANA special-purpose address registries (RFC 6890, updated by RFC 8190) plus the cloud
// metadata endpoints that sit inside otherwise-public space. Matching is longest-prefix on integers (ip-bits.ts),
// so a /32 metadata entry wins over the /16 around it and gives the more useful reason.
//
// Two strengths of refusal. `private` ranges are opened by ROUTER_ALLOW_PRIVATE_TARGETS (process-wide, for local
// testing: the test merchants listen on 127.0.0.1, local ones on RFC 1918 or Docker networks). `always` ranges stay
// refused even then: cloud instance-metadata and credential endpoints (an instance's IAM credentials are one GET
// away, which is the whole prize of an SSRF), the link-local ranges they live in, and the IPv6 forms that can carry
// an IPv4 address we do not decode. A test stack on a cloud VM must not become a credential oracle because someone
// switched private targets on.
import { type IpBits, formatIpv4, inPrefix, parseIp } from './ip-bits.js';

export type AddressVerdict =
  | { allowed: true }
  /** `always`: refused even when private targets are allowed (metadata, link-local, undecoded IPv4 carriers). */
  | { allowed: false; reason: string; always: boolean };

export interface ClassifyOptions {
  /** ROUTER_ALLOW_PRIVATE_TARGETS: open the `private` ranges; the `always` ones stay refused. Default false. */
  allowPrivate?: boolean | undefined;
}

/**
 * `private`: refused unless private targets are allowed. `always`: refused whatever the setting. `embeds-ipv4`: an
 * IPv6 form that carries an IPv4 address which is what the packets really reach (mapped, NAT64, 6to4): the verdict
 * is that of the embedded address, found `shift` bits up, under the same setting.
 *
 * The longest matching prefix decides in both modes, so a `private` rule nested inside an `always` range reopens
 * that part of it when private targets are allowed. The only such nesting is deliberate: `::/128` and `::1/128`
 * inside the IPv4-compatible `::/96` (loopback must stay reachable for local testing).
 */
type Rule =
  | { kind: 'private' | 'always'; prefix: bigint; bits: number; reason: string }
  | { kind: 'embeds-ipv4'; prefix: bigint; bits: number; reason: string; shift: bigint };

function cidr(text: string): { prefix: bigint; bits: number; family: 4 | 6 } {
  const [address = '', bits = ''] = text.split('/');
  const parsed = parseIp(address);
  if (parsed === null) throw new Error(`bad CIDR in address policy: ${text}`);
  return { prefix: parsed.value, bits: Number(bits), family: parsed.family };
}

const refuse = (text: string, reason: string): Rule => ({ kind: 'private', ...cidr(text), reason });
const always = (text: string, reason: string): Rule => ({ kind: 'always', ...cidr(text), reason });
const embeds = (text: string, reason: string, shift: bigint): Rule => ({
  kind: 'embeds-ipv4',
  ...cidr(text),
  reason,
  shift,
});

/** Longest prefix first, so the most specific reason is reported. */
const byLength = (rules: Rule[]): Rule[] => [...rules].sort((a, b) => b.bits - a.bits);

const IPV4_RULES = byLength([
  refuse('0.0.0.0/8', '"this network" (RFC 791, RFC 6890 §2.2.2); 0.0.0.0 reaches the local host on Linux'),
  refuse('10.0.0.0/8', 'private-use (RFC 1918)'),
  refuse('100.64.0.0/10', 'shared address space / carrier-grade NAT (RFC 6598)'),
  // Alibaba Cloud ECS metadata (and its RAM role credentials) sits inside the CGNAT /10, not in link-local.
  always('100.100.100.200/32', 'Alibaba Cloud instance metadata'),
  refuse('127.0.0.0/8', 'loopback (RFC 1122 §3.2.1.3)'),
  // Decision: the whole link-local /16 is refused even with private targets allowed, not just the well-known
  // /32s below. RFC 3927 addresses never leave the link, so no merchant, local or not, is reached through one,
  // while cloud platforms keep adding instance services in this range (AWS time sync 169.254.169.123 and DNS
  // 169.254.169.253, Tencent Cloud metadata 169.254.0.23, Scaleway metadata 169.254.42.42, ...): a list of /32s
  // would always be one endpoint behind. Local testing loses nothing.
  always('169.254.0.0/16', 'link-local (RFC 3927), where cloud platforms serve instance metadata and credentials'),
  always(
    '169.254.169.254/32',
    'cloud instance metadata (AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle Cloud; link-local, RFC 3927)',
  ),
  // The ECS agent serves task IAM credentials here (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) and task metadata.
  always('169.254.170.2/32', 'AWS ECS task metadata and credentials endpoint (link-local, RFC 3927)'),
  // Amazon EKS Pod Identity Agent (AWS EKS user guide, "Set up the Amazon EKS Pod Identity Agent").
  always('169.254.170.23/32', 'AWS EKS Pod Identity Agent, a credentials metadata endpoint (link-local, RFC 3927)'),
  // Azure's platform endpoint in public space: VM agent goal state and extension settings (which may hold secrets).
  always('168.63.129.16/32', 'Azure WireServer (platform-internal virtual address, instance metadata and agent state)'),
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
  // The forms below also carry an IPv4 address, but where it ends up depends on the host or the network (automatic
  // tunnelling, a SIIT or local NAT64 translator at any RFC 6052 offset, a Teredo relay): refused rather than
  // decoded, always, since decoding them wrongly would let 169.254.169.254 through. None is a local-testing need.
  always('::/96', 'IPv4-compatible, deprecated (RFC 4291 §2.5.5.1); carries an IPv4 address'),
  always('::ffff:0:0:0/96', 'IPv4-translated (RFC 2765 §2.1); carries an IPv4 address'),
  always('64:ff9b:1::/48', 'local-use NAT64 prefix (RFC 8215); carries an IPv4 address'),
  refuse('100::/64', 'discard-only (RFC 6666)'),
  refuse('2001::/23', 'IETF protocol assignments (RFC 2928, RFC 6890 §2.2.3)'),
  always('2001::/32', 'Teredo (RFC 4380); carries an obfuscated IPv4 address'),
  refuse('2001:db8::/32', 'documentation (RFC 3849)'),
  refuse('3fff::/20', 'documentation (RFC 9637)'),
  refuse('fc00::/7', 'unique local (RFC 4193)'),
  // AWS puts its Nitro instance services in this ULA /32 (the IPv6 twin of its link-local ones): IMDS ::254,
  // DNS ::253, time sync ::123, EKS Pod Identity ::23 (AWS EC2 and EKS user guides). Refused as a whole for the
  // same reason as 169.254.0.0/16; the /128s give the specific reasons.
  always('fd00:ec2::/32', 'AWS instance services (IPv6; unique local, RFC 4193): metadata, credentials, DNS, time'),
  always('fd00:ec2::254/128', 'AWS instance metadata (IPv6; unique local, RFC 4193)'),
  always(
    'fd00:ec2::23/128',
    'AWS EKS Pod Identity Agent, a credentials metadata endpoint (IPv6; unique local, RFC 4193)',
  ),
  // The GCE metadata server's address for IPv6-only instances.
  always('fd20:ce::254/128', 'GCP instance metadata (IPv6; unique local, RFC 4193)'),
  // IPv6 link-local: never off-link, so never a merchant; the same decision as 169.254.0.0/16.
  always('fe80::/10', 'link-local (RFC 4291 §2.5.6), the IPv6 twin of the metadata range 169.254.0.0/16'),
  refuse('fec0::/10', 'site-local, deprecated (RFC 3879)'),
  refuse('ff00::/8', 'multicast (RFC 4291 §2.7)'),
]);

/** Global unicast (RFC 4291 §2.4, IANA IPv6 address space): everything outside it is unallocated or special. */
const GLOBAL_UNICAST = cidr('2000::/3');

function firstMatch(rules: Rule[], ip: IpBits, width: number): Rule | undefined {
  return rules.find((r) => inPrefix(ip.value, r.prefix, r.bits, width));
}

const ALLOWED: AddressVerdict = { allowed: true };

function classifyBits(ip: IpBits, allowPrivate: boolean): AddressVerdict {
  const rule = ip.family === 4 ? firstMatch(IPV4_RULES, ip, 32) : firstMatch(IPV6_RULES, ip, 128);
  if (rule?.kind === 'embeds-ipv4') {
    const embedded = (ip.value >> rule.shift) & 0xffff_ffffn;
    const verdict = classifyBits({ family: 4, value: embedded }, allowPrivate);
    if (verdict.allowed) return verdict;
    return { ...verdict, reason: `${rule.reason} form of ${formatIpv4(embedded)}: ${verdict.reason}` };
  }
  if (rule?.kind === 'always') return { allowed: false, reason: rule.reason, always: true };
  if (allowPrivate) return ALLOWED;
  if (rule !== undefined) return { allowed: false, reason: rule.reason, always: false };
  if (ip.family === 6 && !inPrefix(ip.value, GLOBAL_UNICAST.prefix, GLOBAL_UNICAST.bits, 128)) {
    return { allowed: false, reason: 'outside IPv6 global unicast 2000::/3 (RFC 4291 §2.4)', always: false };
  }
  return ALLOWED;
}

/**
 * Whether a connection to this address may be opened for a caller. Takes a canonical literal (dotted-quad IPv4 or
 * RFC 4291 IPv6 text, no brackets); anything else, including zone-scoped IPv6, is refused. With `allowPrivate`
 * only the `always` ranges (cloud metadata, link-local, ...) are refused. Never throws.
 */
export function classifyIp(ip: string, opts: ClassifyOptions = {}): AddressVerdict {
  if (typeof ip !== 'string') return { allowed: false, reason: 'not an IP address', always: true };
  const parsed = parseIp(ip);
  if (parsed === null) return { allowed: false, reason: 'not an IP address', always: true };
  return classifyBits(parsed, opts.allowPrivate === true);
}
