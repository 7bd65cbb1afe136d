// The path of a request target as both processes route on it: exactly as the client sent it, never normalised.
// URL parsers resolve dot segments (`.`, `..`, and `%2e` spellings of them) and read `\` as `/` (WHATWG URL, Node's
// url.parse); a path filter in front of the service (a gateway, a WAF rule) may do so or not, and may decode `%2f`
// or `%5c` into a separator or not. Were either process to route a path such as `/api/v1/protocol/../router/payments`
// as the route it resolves to, a filter that blocks `/api/v1/router/payments` could be walked around. So a path
// holding any of these is no route in either process: not found (README "Paths"), whatever it would resolve to.
// No node:http here: the proxy parses raw targets with it (proxy/http/request-target.ts), the admin checks Koa's
// view of the path against it (admin/middleware/exact-path.ts).

/**
 * A dot segment, raw or percent-encoded in any case (`.`, `..`, `%2e`, `.%2E`, `%2e%2e`, RFC 3986 §5.2.4), a
 * backslash, or a percent-encoded `/` or `\` (RFC 3986 §2.2: an encoded delimiter is data, which a proxy or
 * framework in front may still decode into one). Bounded alternatives: linear time on any input.
 */
const AMBIGUOUS = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|\\|%(?:2f|5c)/i;

/** Whether some URL parser or path filter could read `path` as another path than the one it spells. */
export function isAmbiguousPath(path: string): boolean {
  return AMBIGUOUS.test(path);
}

/** scheme "://" authority of an absolute-form target (RFC 9112 §3.2.2); a `\` ends the authority for WHATWG URL. */
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\\]*/;

/** Where the path of `target` (from `from`) ends: at its query or fragment. */
function endOfPath(target: string, from: number): number {
  const q = target.indexOf('?', from);
  const h = target.indexOf('#', from);
  if (q === -1) return h === -1 ? target.length : h;
  return h === -1 || q < h ? q : h;
}

/**
 * The path of a request target exactly as sent (RFC 9112 §3.2): origin-form up to its `?` or `#`; absolute-form
 * after its authority (`/` when it has none, as Node's and WHATWG's parsers give). Undefined for any other form
 * (asterisk-form, garbage): no path to route on.
 */
export function rawPathOf(target: string): string | undefined {
  if (target.startsWith('/')) return target.slice(0, endOfPath(target, 0));
  const authority = ABSOLUTE.exec(target);
  if (authority === null) return undefined;
  const start = authority[0].length;
  const path = target.slice(start, endOfPath(target, start));
  return path === '' ? '/' : path;
}

/**
 * `target` in origin-form (path and query, RFC 9112 §3.2.1), its path as sent: what the proxy forwards to the admin
 * process, so that the admin routes on the very path the proxy decided to forward (no fragment: a fragment is never
 * sent, and Node's url.parse, which Koa falls back to on one, would read backslashes as slashes).
 */
export function originFormOf(target: string, path: string): string {
  const hash = target.indexOf('#');
  const beforeHash = hash === -1 ? target : target.slice(0, hash);
  const q = beforeHash.indexOf('?');
  return q === -1 ? path : `${path}${beforeHash.slice(q)}`;
}
