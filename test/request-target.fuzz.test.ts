// The proxy's request-target parser (proxy/http/request-target.ts) takes plain paths as they are and sends the
// rest to the WHATWG parser. Property: whatever the target, the pathname it routes on is the one WHATWG gives for
// it as a path under the proxy's base (so no path routes differently for skipping the parser, and `//x/...` is a
// path, not a host), and it never throws.
import test from 'ava';
import fc from 'fast-check';
import { targetOf } from '../proxy/http/request-target.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const BASE = 'http://proxy.invalid';

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
  fc.constantFrom('.', '..', '%2e', '%2E%2e', '', 'router', 'proxy', 'a b', '%00', '\\', '#x', '?q=1', '//evil'),
  fc.string({ maxLength: 6 }),
);
const pathLike = fc
  .tuple(fc.array(segment, { maxLength: 6 }), fc.option(fc.string({ maxLength: 10 })))
  .map(([parts, query]) => `/${parts.join('/')}${query === null ? '' : `?${query}`}`);

test('targetOf routes on the pathname WHATWG gives, for plain and hostile targets alike', (t) => {
  fc.assert(
    fc.property(fc.oneof(pathLike, fc.string({ maxLength: 40 })), (raw) => {
      const whatwg = raw.startsWith('/') ? URL.parse(`${BASE}${raw}`) : URL.parse(raw, BASE);
      const ours = targetOf(raw);
      if (whatwg === null) return ours === undefined;
      return ours !== undefined && ours.pathname === whatwg.pathname && ours.url().href === whatwg.href;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('targetOf: the plain router paths are taken as they are, the query is parsed on demand', (t) => {
  const plain = targetOf('/api/v1/router/payments?format=csv&from=2026-01-01');
  t.is(plain?.pathname, '/api/v1/router/payments');
  t.is(plain?.url().searchParams.get('format'), 'csv');
  t.is(targetOf('/api/v1/router/../router/proxy')?.pathname, '/api/v1/router/proxy');
  t.is(targetOf('/api/v1/%72outer/proxy')?.pathname, '/api/v1/%72outer/proxy');
  t.is(targetOf('/')?.pathname, '/');
});

test('targetOf: an empty first segment is part of the path, not a host', (t) => {
  t.is(targetOf('//evil.example/api/v1/router/route')?.pathname, '//evil.example/api/v1/router/route');
  t.is(targetOf('//api/v1/router/route?x=1')?.url().pathname, '//api/v1/router/route');
  t.is(targetOf('/\\evil/api/v1/router/route')?.pathname, '//evil/api/v1/router/route');
  t.is(targetOf('http://other.example/api/v1/router/route')?.pathname, '/api/v1/router/route');
});
