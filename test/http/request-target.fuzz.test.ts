// The proxy's request-target parser (proxy/http/request-target.ts) and the path rule both processes share
// (shared/request-path.ts). Properties: whatever the target, the path routed on is the path as sent, never a URL
// parser's reading of it; a path holding a dot segment, a backslash or an encoded separator (raw or percent-encoded,
// in any case) is marked ambiguous, which no route takes; and every path not so marked is one a URL parser leaves as
// it is (so no path is routed as one thing here and read as another by a parser in front or behind). It never
// throws. (The defect: the proxy routed on WHATWG's pathname, so GET /api/v1/protocol/../router/payments reached the
// router's payments list through the proxy, where the admin process, and the README, find no route.)
import test from 'ava';
import fc from 'fast-check';
import { targetOf } from '../../proxy/http/request-target.js';
import { isAmbiguousPath, originFormOf, rawPathOf } from '../../shared/request-path.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const BASE = 'http://proxy.invalid';

/** Spellings of `.`, `..`, `\` and an encoded `/` or `\`: every one must make its path ambiguous. */
const HOSTILE_SEGMENTS = ['.', '..', '%2e', '%2E', '%2e%2e', '%2E%2e', '%2e%2E', '.%2e', '%2e.', '.%2E', '%2E.'];
const HOSTILE_INSIDE = ['\\', '%5c', '%5C', '%2f', '%2F'];

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
  fc.constantFrom(...HOSTILE_SEGMENTS, ...HOSTILE_INSIDE, '', 'router', 'proxy', 'a b', '%00', '#x', '?q=1', '//evil'),
  fc.constantFrom('...', '.a', 'a.', '%2ex', 'x%2e', '%252e', '%2', '%', '..;', ';', '%2e%2e%2e'),
  fc.string({ maxLength: 6 }),
);
const pathLike = fc
  .tuple(fc.array(segment, { maxLength: 6 }), fc.option(fc.string({ maxLength: 10 })))
  .map(([parts, query]) => `/${parts.join('/')}${query === null ? '' : `?${query}`}`);

/** An independent reading of the rule, segment by segment. */
function ambiguousByHand(path: string): boolean {
  if (path.includes('\\')) return true;
  const lower = path.toLowerCase();
  if (lower.includes('%2f') || lower.includes('%5c')) return true;
  return lower.split('/').some((s) => {
    const dots = s.replaceAll('%2e', '.');
    return dots === '.' || dots === '..';
  });
}

test('targetOf routes on the path as sent, up to its query or fragment, and marks it by the rule', (t) => {
  fc.assert(
    fc.property(fc.oneof(pathLike, fc.string({ maxLength: 40 })), (raw) => {
      const ours = targetOf(raw);
      if (!raw.startsWith('/')) return true; // absolute-form and garbage: the next properties
      if (ours === undefined) return false;
      const end = raw.search(/[?#]/);
      const asSent = end === -1 ? raw : raw.slice(0, end);
      return ours.pathname === asSent && ours.ambiguous === ambiguousByHand(asSent);
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

/** Characters a WHATWG URL leaves as they are in a path: the only changes it can make to such a path are the
 *  resolution of dot segments and `\` read as `/`. */
const urlSafePath = fc
  .array(
    fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@|^-]{0,6}$/),
      fc.constantFrom(...HOSTILE_SEGMENTS, ...HOSTILE_INSIDE, '', '%41', '%252e', 'a\\b', '%2e%2e%2e'),
    ),
    { maxLength: 7 },
  )
  .map((parts) => `/${parts.join('/')}`);

test('a path not marked ambiguous is one a URL parser reads as it is: nothing it would resolve differently is routed', (t) => {
  fc.assert(
    fc.property(urlSafePath, (path) => {
      const ours = targetOf(path);
      if (ours === undefined) return false;
      if (ours.ambiguous) return true;
      return URL.parse(`${BASE}${path}`)?.pathname === path;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

const ROUTES = [
  '/api/v1/router/payments',
  '/api/v1/router/route',
  '/api/v1/router/proxy',
  '/api/v1/proxy',
  '/proxy',
  '/healthz',
  '/api/v1/protocol/agents',
  '/api/v1/router/payments/0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59/settled',
];

test('any target with a dot segment or backslash, raw or percent-encoded, anywhere in the path, is no route', (t) => {
  const hostile = fc.oneof(
    // a segment of its own, or `x/..` walking back, between two segments of a route
    fc.constantFrom(...HOSTILE_SEGMENTS).map((h) => `/${h}`),
    fc
      .constantFrom(...HOSTILE_SEGMENTS.filter((h) => h.replaceAll('%2e', '.').toLowerCase().length > 0))
      .map((h) => `/x/${h}`),
  );
  const separator = fc.constantFrom(...HOSTILE_INSIDE);
  const form = fc.constantFrom('', 'http://proxy.example', 'HTTP://a.b:8080');
  const query = fc.constantFrom('', '?x=1', '?a=/../b', '#frag');
  const inserted = fc.tuple(fc.constantFrom(...ROUTES), fc.nat(), hostile, form, query).map(([route, at, h, f, q]) => {
    const cuts = [...route.matchAll(/\//g)].map((m) => m.index);
    const cut = cuts[at % cuts.length] ?? 0;
    return `${f}${route.slice(0, cut)}${h}${route.slice(cut)}${q}`;
  });
  const trailing = fc
    .tuple(fc.constantFrom(...ROUTES), fc.constantFrom(...HOSTILE_SEGMENTS), form, query)
    .map(([route, h, f, q]) => `${f}${route}/${h}${q}`);
  // A separator in place of one between two segments (not the first: in absolute-form it would join the host).
  const replaced = fc
    .tuple(fc.constantFrom(...ROUTES.filter((r) => r.lastIndexOf('/') > 0)), fc.nat(), separator, form, query)
    .map(([route, at, s, f, q]) => {
      const cuts = [...route.matchAll(/\//g)].map((m) => m.index).filter((i) => i > 0);
      const cut = cuts[at % cuts.length] ?? 0;
      return `${f}${route.slice(0, cut)}${s}${route.slice(cut + 1)}${q}`;
    });
  fc.assert(
    fc.property(fc.oneof(inserted, trailing, replaced), (raw) => {
      const ours = targetOf(raw);
      // The proxy answers a refused target 400 and routes an ambiguous one nowhere; the admin's rule is the same.
      const asSent = rawPathOf(raw);
      return (ours === undefined || ours.ambiguous === true) && (asSent === undefined || isAmbiguousPath(asSent));
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('targetOf: the plain router paths are taken as they are, the query is parsed on demand', (t) => {
  const plain = targetOf('/api/v1/router/payments?format=csv&from=2026-01-01');
  t.is(plain?.pathname, '/api/v1/router/payments');
  t.false(plain?.ambiguous);
  t.is(plain?.url().searchParams.get('format'), 'csv');
  t.is(targetOf('/api/v1/%72outer/proxy')?.pathname, '/api/v1/%72outer/proxy');
  t.is(targetOf('/')?.pathname, '/');
});

test('targetOf: dot segments and backslashes are kept as sent and mark the path, never resolved', (t) => {
  for (const [raw, path] of [
    ['/api/v1/router/../router/proxy', '/api/v1/router/../router/proxy'],
    ['/api/v1/protocol/../router/payments?x=1', '/api/v1/protocol/../router/payments'],
    ['/api/v1/router/%2e%2e/router/payments', '/api/v1/router/%2e%2e/router/payments'],
    ['/api/v1/router/%2E%2e/router/payments', '/api/v1/router/%2E%2e/router/payments'],
    ['/api/v1/./router/payments', '/api/v1/./router/payments'],
    ['/api/v1/router/.%2e/router/route', '/api/v1/router/.%2e/router/route'],
    ['/api/v1/router\\payments', '/api/v1/router\\payments'],
    ['/api/v1/router%5cpayments', '/api/v1/router%5cpayments'],
    ['/api/v1/router%2fpayments', '/api/v1/router%2fpayments'],
    ['/api/v1/router/payments/.', '/api/v1/router/payments/.'],
    ['/api/v1/router/payments/x/..#y', '/api/v1/router/payments/x/..'],
  ] as const) {
    const got = targetOf(raw);
    t.is(got?.pathname, path, raw);
    t.true(got?.ambiguous, raw);
  }
  for (const raw of ['/api/v1/router/...', '/api/v1/router/.well', '/api/v1/router/a.b', '/api/v1/router/%252e%252e']) {
    t.false(targetOf(raw)?.ambiguous, raw);
  }
});

test('targetOf: an empty first segment is part of the path, not a host; absolute-form routes on its path as sent', (t) => {
  t.is(targetOf('//evil.example/api/v1/router/route')?.pathname, '//evil.example/api/v1/router/route');
  t.is(targetOf('//api/v1/router/route?x=1')?.url().pathname, '//api/v1/router/route');
  t.is(targetOf('/\\evil/api/v1/router/route')?.pathname, '/\\evil/api/v1/router/route');
  t.true(targetOf('/\\evil/api/v1/router/route')?.ambiguous);
  t.is(targetOf('http://other.example/api/v1/router/route')?.pathname, '/api/v1/router/route');
  t.false(targetOf('http://other.example/api/v1/router/route')?.ambiguous);
  t.is(targetOf('http://other.example/api/v1/x/../router/route')?.pathname, '/api/v1/x/../router/route');
  t.true(targetOf('http://other.example\\api/v1/router/route')?.ambiguous);
  t.is(targetOf('http://other.example')?.pathname, '/');
  t.is(targetOf('http://other.example?x=1')?.pathname, '/');
  t.is(targetOf('*'), undefined);
  t.is(targetOf('http://[bad/x'), undefined);
});

test('what the proxy forwards is the target in origin-form, its path as sent', (t) => {
  const cases: [string, string][] = [
    ['/api/v1/protocol/agents?page=2', '/api/v1/protocol/agents?page=2'],
    ['/api/v1/x/../protocol/agents', '/api/v1/x/../protocol/agents'],
    ['/api/v1/protocol\\agents#frag', '/api/v1/protocol\\agents'],
    ['/a#b?c', '/a'],
    ['http://h.example/api/v1/protocol/agents?page=2#f', '/api/v1/protocol/agents?page=2'],
    ['http://h.example', '/'],
  ];
  for (const [raw, forwarded] of cases) t.is(targetOf(raw)?.originForm(), forwarded, raw);
  t.is(originFormOf('/p?q#f', '/p'), '/p?q');
});
