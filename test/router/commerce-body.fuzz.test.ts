// The commerce route's body parser (shared/router/requests.ts CommerceRouteBody), property-tested: it is
// /router/route's body without `delegationId`, and a `delegationId` of any value is refused, never ignored.
import test from 'ava';
import fc from 'fast-check';
import { CommerceRouteBody, RouteBody } from '../../shared/router/requests.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const DELEGATION = '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59';

/** Bodies near the valid ones: each field present or not, with a plausible or a hostile value. */
const body = fc.record(
  {
    requestId: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constant('req-1')),
    url: fc.oneof(fc.constant('https://merchant.example/api'), fc.string()),
    slug: fc.oneof(fc.constant('weather'), fc.string()),
    path: fc.oneof(fc.constant('v1/today'), fc.constant('../x'), fc.string()),
    method: fc.oneof(fc.constantFrom('GET', 'POST', 'TRACE'), fc.string()),
    headers: fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
    body: fc.jsonValue({ maxDepth: 3 }),
    protocol: fc.constantFrom('x402', 'mpp', 'card'),
  },
  { requiredKeys: [] },
);

test(`commerce bodies (${RUNS} runs): exactly /router/route's verdict without delegationId`, (t) => {
  fc.assert(
    fc.property(body, (b) => {
      const commerce = CommerceRouteBody.safeParse(b);
      const route = RouteBody.safeParse({ ...b, delegationId: DELEGATION });
      if (commerce.success !== route.success) return false;
      if (!commerce.success || !route.success) return true;
      const { delegationId, ...rest } = route.data;
      return delegationId === DELEGATION && JSON.stringify(rest) === JSON.stringify(commerce.data);
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test(`a delegationId of any value (${RUNS} runs) is refused, naming the field`, (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 2 }), (value) => {
      const r = CommerceRouteBody.safeParse({
        requestId: 'r1',
        url: 'https://merchant.example/api',
        delegationId: value,
      });
      return !r.success && r.error.issues.some((i) => i.path[0] === 'delegationId');
    }),
    { numRuns: RUNS },
  );
  t.pass();
});
