// The address a request came from, as the per-address limits count it (the device authorization limit). The
// proxy is the front door: it knows its TCP peer and, behind TRUSTED_PROXY_HOPS reverse proxies of the operator's,
// the X-Forwarded-For entry the outermost of them appended (every entry left of it was written by the client, who
// can write anything there). It tells the admin process in one header, set on every forwarded request over
// whatever the client sent, with an HMAC under a key derived from SECRETS_KEY: the admin port can also be reached
// directly, and a header anyone could write would let a caller pick a fresh address for every request. Without a
// valid header the admin process counts its own TCP peer, and never reads X-Forwarded-For.
import { secretsEqual } from './crypto/hashing.js';
import type { SecretBox } from './crypto/secrets.js';
import { formatIpv4, parseIp } from './upstream/ip-bits.js';

/** The header the proxy vouches for the client address with: `<address> <mac>`. */
export const CLIENT_ADDRESS_HEADER = 'x-payroute-client-address';
const MAC_PURPOSE = 'client-address';
/** What a request whose address is not known counts as (a socket already closed). */
export const UNKNOWN_ADDRESS = 'unknown';

const MAPPED_PREFIX = 0xffffn << 32n; // ::ffff:0:0/96, IPv4-mapped (RFC 4291 §2.5.5.2)

/**
 * One spelling per address: IPv4 as a dotted quad (an IPv4-mapped IPv6 address included, as node reports IPv4
 * peers on a dual-stack socket), IPv6 as eight groups of lower-case hex (no `::`, so it holds no space and splits
 * unambiguously). Undefined for anything that is not an IP literal.
 */
export function normalizeAddress(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const ip = parseIp(raw.trim());
  if (ip === null) return undefined;
  if (ip.family === 4) return formatIpv4(ip.value);
  if (ip.value >> 32n === MAPPED_PREFIX >> 32n) return formatIpv4(ip.value & 0xffff_ffffn);
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((ip.value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

/**
 * The client address the proxy vouches for: its TCP peer, or, with `hops` trusted reverse proxies in front of it,
 * the X-Forwarded-For entry `hops` from the right (each trusted hop appended the address it saw). An entry that is
 * missing or not an IP literal falls back to the peer: that cannot be forged, only shared.
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  hops: number,
): string {
  const own = normalizeAddress(peer) ?? UNKNOWN_ADDRESS;
  if (hops === 0 || forwardedFor === undefined) return own;
  const entries = (typeof forwardedFor === 'string' ? [forwardedFor] : forwardedFor).flatMap((h) => h.split(','));
  const entry = entries.length >= hops ? entries[entries.length - hops] : undefined;
  return normalizeAddress(entry) ?? own;
}

/** The header value the proxy sends the admin process. */
export function stampClientAddress(box: SecretBox, address: string): string {
  return `${address} ${box.mac(MAC_PURPOSE, address)}`;
}

/** The address a header vouches for; undefined when it is absent or its MAC is not this deployment's. */
export function readClientAddress(box: SecretBox, header: string | undefined): string | undefined {
  if (header === undefined || header.length > 200) return undefined;
  const [address, mac, ...rest] = header.split(' ');
  if (address === undefined || mac === undefined || rest.length > 0) return undefined;
  return secretsEqual(mac, box.mac(MAC_PURPOSE, address)) ? address : undefined;
}

/**
 * The bucket a per-address limit counts an address in: an IPv4 address itself; an IPv6 address by its /64, the
 * block one subscriber or host is given (RFC 6177), inside which it can take any address it likes.
 */
export function addressBucket(address: string): string {
  const ip = parseIp(address);
  if (ip === null || ip.family === 4) return address;
  const prefix = ip.value >> 64n;
  const groups: string[] = [];
  for (let shift = 48n; shift >= 0n; shift -= 16n) groups.push(((prefix >> shift) & 0xffffn).toString(16));
  return `${groups.join(':')}::/64`;
}
