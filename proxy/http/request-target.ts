// The request target (RFC 9112 §3.2) of a call to the proxy, parsed only as far as the route needs.

const BASE = 'http://proxy.invalid';
/** Origin-form paths with nothing for a URL parser to normalise (no dot segments, escapes or empty segments). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+\/?$|^\/$/;

/**
 * Parses the request target (RFC 9112 §3.2). A plain path, as every router call has, is taken as it is: WHATWG
 * parsing it would give the same pathname, and skipping it saves a URL object per relayed request. Anything else
 * goes through the WHATWG parser. `undefined` when the target is malformed.
 */
export function targetOf(raw: string): RequestTarget | undefined {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  if (PLAIN_PATH.test(path)) return new RequestTarget(path, raw, undefined);
  const parsed = URL.parse(raw, BASE);
  return parsed === null ? undefined : new RequestTarget(parsed.pathname, raw, parsed);
}

/** The request target: its path at once, the parsed URL (query included) only when a route asks for it. */
export class RequestTarget {
  constructor(
    readonly pathname: string,
    private readonly raw: string,
    private parsed: URL | undefined,
  ) {}

  url(): URL {
    this.parsed ??= URL.parse(this.raw, BASE) ?? new URL(this.pathname, BASE);
    return this.parsed;
  }
}
