// Does a called endpoint belong to an agent? (POST /protocol/agents/initialize) The agent registers endpoints as
// `{ VERB: url }` objects; a registered path segment `:name` matches any single non-empty segment, everything else
// must match exactly: scheme, host and port (after WHATWG URL normalisation, so `HTTPS://Host:443` equals
// `https://host`), every other path segment, the query string and the fragment.

/** The verbs registered for an agent: keys are compared case-insensitively. */
export type RegisteredEndpoints = readonly Record<string, string>[];

interface Parts {
  readonly origin: string;
  readonly segments: readonly string[];
  readonly search: string;
  readonly hash: string;
}

function partsOf(url: string): Parts | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (u.username !== '' || u.password !== '') return undefined;
  return { origin: u.origin, segments: u.pathname.split('/'), search: u.search, hash: u.hash };
}

/** A `:name` segment (path-to-regexp style): a colon followed by an identifier. */
const PLACEHOLDER = /^:[A-Za-z_][A-Za-z0-9_]*$/;

function segmentMatches(registered: string, called: string): boolean {
  if (PLACEHOLDER.test(registered)) return called.length > 0;
  return registered === called;
}

/** True when `called` is the registered URL template `registered` with its placeholders filled in. */
export function urlMatches(registered: string, called: string): boolean {
  const r = partsOf(registered);
  const c = partsOf(called);
  if (r === undefined || c === undefined) return false;
  if (r.origin !== c.origin || r.search !== c.search || r.hash !== c.hash) return false;
  if (r.segments.length !== c.segments.length) return false;
  return r.segments.every((seg, i) => segmentMatches(seg, c.segments[i] ?? ''));
}

/** True when one of the agent's endpoints for `verb` matches `called`. */
export function endpointMatches(endpoints: RegisteredEndpoints, verb: string, called: string): boolean {
  const wanted = verb.toUpperCase();
  for (const entry of endpoints) {
    if (entry === null || typeof entry !== 'object') continue;
    for (const [key, url] of Object.entries(entry)) {
      if (key.toUpperCase() === wanted && typeof url === 'string' && urlMatches(url, called)) return true;
    }
  }
  return false;
}
