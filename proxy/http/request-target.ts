// The request target (RFC 9112 §3.2) of a call to the proxy, parsed only as far as the route needs.
import { isAmbiguousPath, originFormOf, rawPathOf } from '../../shared/request-path.js';

const BASE = 'http://proxy.invalid';
/** Origin-form paths with nothing for a URL parser to normalise (no dot segments, escapes or empty segments). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+\/?$|^\/$/;

/**
 * Parses the request target (RFC 9112 §3.2). Every target is routed on its path as sent (shared/request-path.ts),
 * never on WHATWG's pathname, which resolves dot segments and reads `\` as `/`: the admin process, which gets the
 * path as sent, does neither, and a path either would read as another is marked `ambiguous`, which no route of
 * either process takes. A plain path, as every router call has, is taken as it is at once; the URL object (for the
 * query) is made only when a route asks for it. `undefined` when the target has no path (asterisk-form, garbage)
 * or is an absolute-form URL the WHATWG parser refuses.
 *
 * A target that starts with `/` is origin-form, whose path may begin with an empty segment (`//x/y`): it is parsed
 * as a path under our base, never relative to it, where `//x` would be read as a host (a scheme-relative URL).
 */
export function targetOf(raw: string): RequestTarget | undefined {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  if (PLAIN_PATH.test(path)) return new RequestTarget(path, raw, undefined, false);
  const asSent = rawPathOf(raw);
  if (asSent === undefined) return undefined;
  // An origin-form target always parses under our base; only an absolute-form one may be refused (a bad host).
  let parsed: URL | undefined;
  if (!raw.startsWith('/')) {
    const absolute = parse(raw);
    if (absolute === null) return undefined;
    parsed = absolute;
  }
  return new RequestTarget(asSent, raw, parsed, isAmbiguousPath(asSent));
}

const parse = (raw: string): URL | null => (raw.startsWith('/') ? URL.parse(`${BASE}${raw}`) : URL.parse(raw, BASE));

/** The request target: its path at once, the parsed URL (query included) only when a route asks for it. */
export class RequestTarget {
  constructor(
    /** The path as sent: what both processes route on. */
    readonly pathname: string,
    private readonly raw: string,
    private parsed: URL | undefined,
    /** The path holds a dot segment, a backslash or an encoded separator: it is no route (not found). */
    readonly ambiguous: boolean,
  ) {}

  /** The parsed URL, for its query parameters (its pathname is WHATWG's, not the one routed on). */
  url(): URL {
    this.parsed ??= parse(this.raw) ?? new URL(this.pathname, BASE);
    return this.parsed;
  }

  /** The target in origin-form, its path as sent: what is forwarded to the admin process. */
  originForm(): string {
    if (this.raw.startsWith('/') && !this.raw.includes('#')) return this.raw;
    return originFormOf(this.raw, this.pathname);
  }
}
