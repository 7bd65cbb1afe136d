// IP addresses as integers, so that ranges are compared with arithmetic instead of string patterns.
// Input must already be a canonical literal (node:net isIPv4 / isIPv6 said yes): this module does not guess at
// decimal, octal or hex spellings. Those are normalised by the WHATWG URL parser before any address reaches here.
import { isIPv4, isIPv6 } from 'node:net';

export type IpFamily = 4 | 6;

/** An address as a number: 32 bits for IPv4, 128 bits for IPv6. */
export interface IpBits {
  readonly family: IpFamily;
  readonly value: bigint;
}

/** Dotted-quad IPv4 (strict: node:net refuses leading zeros, so `0177.0.0.1` is not accepted here). */
function ipv4ToBigint(text: string): bigint {
  let value = 0n;
  for (const octet of text.split('.')) value = (value << 8n) | BigInt(Number.parseInt(octet, 10));
  return value;
}

/** RFC 4291 §2.2 text forms, including `::` compression and a dotted-quad tail (form 3). */
function ipv6ToBigint(text: string): bigint {
  let rest = text;
  let tail: bigint | null = null;
  const lastColon = rest.lastIndexOf(':');
  if (rest.includes('.', lastColon)) {
    // `::ffff:1.2.3.4`: the last 32 bits are written as IPv4; replace them by two zero groups and OR them in.
    tail = ipv4ToBigint(rest.slice(lastColon + 1));
    rest = `${rest.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', after] = rest.split('::', 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = after === undefined || after === '' ? [] : after.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = after === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  if (tail !== null) value = (value & ~0xffff_ffffn) | tail;
  return value;
}

/** Parses a canonical IPv4 or IPv6 literal (no brackets, no zone id); null for anything else. */
export function parseIp(text: string): IpBits | null {
  if (isIPv4(text)) return { family: 4, value: ipv4ToBigint(text) };
  // A zone id (`fe80::1%eth0`) names an interface of this machine: never a public target, and not parsed here.
  if (text.includes('%')) return null;
  if (isIPv6(text)) return { family: 6, value: ipv6ToBigint(text) };
  return null;
}

/** Formats 32 bits as a dotted quad. */
export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** True when the top `bits` bits of `value` equal those of `prefix` (both of width `width`). */
export function inPrefix(value: bigint, prefix: bigint, bits: number, width: number): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === prefix >> shift;
}
