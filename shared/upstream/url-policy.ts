// The target URL a caller gives the router, checked before anything is resolved or connected. One parser decides
// what the host is: the WHATWG URL parser, which undici also uses, so the host we check is the host we reach. It
// already turns the IPv4 spellings that other parsers disagree on (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`,
// full-width digits and dots) into a dotted quad, and IPv6 into its canonical text, so the address policy only
// ever sees canonical literals. What WHATWG would silently repair (tabs, backslashes, missing slashes, userinfo)
// is refused instead: a URL that means different things to different parsers is a request-smuggling tool.
import { isIP } from 'node:net';
import { boundedMemo } from '../memo.js';
import { classifyIp } from './address-policy.js';

/** Longer URLs are refused (the de-facto limit of browsers and many servers; also bounds our work). */
export const MAX_URL_LENGTH = 2048;

export type TargetUrl =
  | {
      ok: true;
      /** Parsed, fragment removed. */
      url: URL;
      /** What is resolved or connected to: lower-case name as WHATWG normalised it, or an IP without brackets. */
      host: string;
      /** Set when the host is an IP literal (no DNS lookup happens then). */
      literalIp?: string;
    }
  | { ok: false; reason: string };

/**
 * Names that reach this machine or its private network whatever public DNS says: RFC 6761 §6.3 (`localhost`),
 * Debian's /etc/hosts aliases, and the short names cloud resolvers answer with the metadata server (GCE
 * `metadata`, EC2 `instance-data`). Suffixes: RFC 6761 `.localhost`, RFC 6762 mDNS `.local`, the private-use
 * `.internal` TLD reserved by ICANN in 2024 (`metadata.google.internal`, `*.ec2.internal`), RFC 8375 `.home.arpa`
 * and the conventional `.localdomain`.
 */
const PRIVATE_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback', 'metadata', 'instance-data']);
const PRIVATE_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa'];

function isPrivateName(name: string): boolean {
  return PRIVATE_NAMES.has(name) || PRIVATE_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`));
}

/**
 * Names of the metadata server itself: GCE documents `metadata.google.internal` (and the short `metadata` its
 * resolver answers), EC2 the short `instance-data`. Refused even with private targets allowed, like the addresses
 * (address-policy.ts). Defence in depth only: whatever a name resolves to is checked again at connect time, so
 * another name for 169.254.169.254 is refused there.
 */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data']);

/** C0 controls, space and DEL: WHATWG strips some of them silently (tab, CR, LF) and trims the rest. */
function hasControlOrSpace(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return true;
  }
  return false;
}

const refused = (reason: string): TargetUrl => ({ ok: false, reason });

/**
 * Checks a caller-supplied target URL. With `allowPrivate` false (production), private names and non-public IP
 * literals are refused here; names that resolve to non-public addresses are refused at connect time (resolver.ts).
 * With `allowPrivate` true, metadata names and metadata / link-local literals are still refused (and names that
 * resolve to them, at connect time). Never throws.
 */
export function parseTargetUrl(raw: string, opts: { allowPrivate: boolean }): TargetUrl {
  if (typeof raw !== 'string' || raw.length === 0) return refused('the target URL is empty');
  if (raw.length > MAX_URL_LENGTH) return refused(`the target URL is longer than ${MAX_URL_LENGTH} characters`);
  if (hasControlOrSpace(raw)) return refused('the target URL contains spaces or control characters');
  // WHATWG reads `\` as `/` in http(s) URLs; other parsers read it as part of the userinfo or host.
  if (raw.includes('\\')) return refused('the target URL contains a backslash');

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return refused('the target URL must be absolute (http:// or https://)');
  if (scheme !== 'http' && scheme !== 'https')
    return refused(`the scheme "${scheme}" is not allowed (http and https only)`);
  // WHATWG also accepts `http:host`, `http:/host` and `http:///host`; only the unambiguous `scheme://host` is taken.
  const afterScheme = raw.slice(scheme.length + 1);
  if (!afterScheme.startsWith('//') || afterScheme.startsWith('///')) {
    return refused('the target URL must have the form scheme://host/path');
  }
  const rest = afterScheme.slice(2);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  // `user:pass@host`, `@host`, `host@evil`: userinfo is where "which host is this?" tricks live (RFC 3986 §7.6).
  if (authority.includes('@')) return refused('credentials (user@ or :pass@) are not allowed in the target URL');
  // Percent-encoded hosts (`%6c%6fcalhost`, `a%40b`) are decoded by some parsers and not by others.
  if (authority.includes('%')) return refused('percent-encoding is not allowed in the target host');

  const url = URL.parse(raw);
  if (url === null) return refused('the target URL is not a valid URL');
  // Defence in depth: the checks above already make these impossible.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused('only http and https are allowed');
  if (url.username !== '' || url.password !== '') return refused('credentials are not allowed in the target URL');
  url.hash = '';

  const hostname = url.hostname;
  if (hostname === '') return refused('the target URL has no host');
  if (hostname.startsWith('[')) {
    const ip = hostname.slice(1, -1);
    return checkLiteral(url, ip, opts);
  }
  // Trailing dots make a name fully qualified (`localhost.`); `127.0.0.1..` is left as a name by WHATWG.
  const bare = hostname.replace(/\.+$/, '');
  if (bare === '') return refused('the target URL has no host');
  if (isIP(bare) !== 0) return checkLiteral(url, bare, opts);
  if (METADATA_NAMES.has(bare)) {
    return refused(
      `the host "${bare}" is a cloud instance-metadata name: never a target, not even with private targets allowed`,
    );
  }
  if (!opts.allowPrivate && isPrivateName(bare)) return refused(`the host "${bare}" is a local or internal name`);
  return { ok: true, url, host: hostname };
}

function checkLiteral(url: URL, ip: string, opts: { allowPrivate: boolean }): TargetUrl {
  // Checked in both modes: with allowPrivate, cloud metadata and link-local literals (in every spelling WHATWG
  // normalised above, and their mapped / NAT64 / 6to4 forms) are still refused.
  const verdict = classifyIp(ip, { allowPrivate: opts.allowPrivate });
  if (!verdict.allowed) {
    return refused(
      verdict.always
        ? `the address ${ip} is never a target, not even with private targets allowed: ${verdict.reason}`
        : `the address ${ip} is not a public address: ${verdict.reason}`,
    );
  }
  return { ok: true, url, host: ip, literalIp: ip };
}

/** What the outbound client needs of a checked target: plain strings, safe to share between requests. */
export type TargetRoute = { ok: true; origin: string; path: string } | { ok: false; reason: string };

// Routes memoised per mode by raw URL: a relay calls the same few merchant URLs over and over, and the WHATWG parse
// plus the checks above cost more than the rest of a free relay's own bookkeeping. Verdicts on names are never
// final here (resolver.ts checks the addresses at connect time), so caching them changes nothing.
function routeOf(raw: string, opts: { allowPrivate: boolean }): TargetRoute {
  const t = parseTargetUrl(raw, opts);
  return t.ok ? { ok: true, origin: t.url.origin, path: `${t.url.pathname}${t.url.search}` } : t;
}
const MEMO = { max: 4096, maxKeyLength: 512 };
const privateRoutes = boundedMemo((raw) => routeOf(raw, { allowPrivate: true }), MEMO);
const publicRoutes = boundedMemo((raw) => routeOf(raw, { allowPrivate: false }), MEMO);

/** parseTargetUrl reduced to the origin and path sent upstream, memoised. Never throws. */
export function targetRoute(raw: string, opts: { allowPrivate: boolean }): TargetRoute {
  if (typeof raw !== 'string') return routeOf(raw, opts);
  return opts.allowPrivate ? privateRoutes(raw) : publicRoutes(raw);
}
