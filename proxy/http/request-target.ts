// The request target (RFC 9112 §3.2) of a call to the proxy, parsed only as far as the route needs.

const BASE = 'http://proxy.invalid';
/** Origin-form paths with nothing for a URL parser to normalise (no dot segments, escapes or empty segments). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+\/?$|^\/$/;

/**
 * Parses the request target (RFC 9112 §3.2). A plain path, as every router call has, is taken as it is: WHATWG
 * parsing it would give the same pathname, and skipping it saves a URL object per relayed request. Anything else
 * goes through the WHATWG parser. `undefined` when the target is malformed.
 *
 * A target that starts with `/` is origin-form, whose path may begin with an empty segment (`//x/y`): it is parsed
 * as a path under our base, never relative to it, where `//x` would be read as a host (a scheme-relative URL) and
 * `//x/api/v1/router/route` would route as `/api/v1/router/route`.
 */
export function targetOf(raw: string): RequestTarget | undefined {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  if (PLAIN_PATH.test(path)) return new RequestTarget(path, raw, undefined);
  const parsed = parse(raw);
  return parsed === null ? undefined : new RequestTarget(parsed.pathname, raw, parsed);
}

const parse = (raw: string): URL | null => (raw.startsWith('/') ? URL.parse(`${BASE}${raw}`) : URL.parse(raw, BASE));

/** The request target: its path at once, the parsed URL (query included) only when a route asks for it. */
export class RequestTarget {
  constructor(
    readonly pathname: string,
    private readonly raw: string,
    private parsed: URL | undefined,
  ) {}

  url(): URL {
    this.parsed ??= parse(this.raw) ?? new URL(this.pathname, BASE);
    return this.parsed;
  }
}
