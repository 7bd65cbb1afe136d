// Concurrent requests with one Idempotency-Key, on SQLite and PostgreSQL: the claim is a database row under a
// unique (user, scope, key), so of 20 identical requests exactly one runs; every other one is answered without
// running (the first answer replayed, or 409 BCK.IDEMPOTENCY.0002 while it runs), and the route takes effect once.
// On PostgreSQL the same holds with the requests spread over two admin processes: nothing in process memory
// decides it.
import { randomUUID } from 'node:crypto';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { type Prepared, ROUTE_CASES, type Request } from '../support/idempotent-routes.js';
import { forEachDb } from '../support/matrix.js';
import { secondAdmin } from '../support/stack.js';

const N = 20;
const REPLAYED = 'idempotent-replayed';

const sendVia = (api: ApiClient, r: Request, key: string): Promise<ApiResponse<any>> =>
  api.call('POST', r.path, r.body, { 'idempotency-key': key });

/** The burst's answers: exactly one ran; the rest are replays of it or "in progress"; one effect. */
async function checkOneEffect(
  t: { is(a: unknown, b: unknown, m?: string): void; deepEqual(a: unknown, b: unknown, m?: string): void },
  w: Prepared,
  results: readonly ApiResponse<any>[],
  before: number,
): Promise<ApiResponse<any>> {
  const ran = results.filter((r) => r.status === w.status && r.headers.get(REPLAYED) === null);
  t.is(ran.length, 1, JSON.stringify(results.map((r) => [r.status, r.body.code])));
  const first = ran[0];
  if (first === undefined) throw new Error('no first answer');
  for (const r of results) {
    if (r === first) continue;
    if (r.status === 409) {
      t.is(r.body.code, 'BCK.IDEMPOTENCY.0002', r.text);
      t.is(r.body.retryable, true);
    } else {
      t.is(r.status, w.status, r.text);
      t.is(r.headers.get(REPLAYED), 'true');
      t.deepEqual(r.body, first.body);
    }
  }
  t.is(await w.effects(), before + 1, 'one effect');
  return first;
}

forEachDb(({ kind, stack, test }) => {
  for (const c of ROUTE_CASES) {
    test(`${c.name}: ${N} concurrent identical requests with one key make one effect`, async (t) => {
      const s = stack();
      const w = await c.prepare(s);
      const key = randomUUID();
      const before = await w.effects();
      const results = await Promise.all(Array.from({ length: N }, () => sendVia(w.caller.api, w.request, key)));
      const first = await checkOneEffect(t, w, results, before);
      // Once it has run, every retry is the replay.
      const later = await sendVia(w.caller.api, w.request, key);
      t.is(later.headers.get(REPLAYED), 'true');
      t.deepEqual(later.body, first.body);
    });

    if (kind === 'postgresql') {
      test(`${c.name}: ${N} concurrent requests with one key over two admin processes make one effect`, async (t) => {
        const s = stack();
        const w = await c.prepare(s);
        const other = apiClient(`${(await secondAdmin(s)).url}/api/v1`, w.caller.api.apiKey);
        // Both processes answer once first (a GET), so neither is still opening connections when the burst comes.
        for (const api of [w.caller.api, other]) {
          const r = await api.get('/delegation');
          if (r.status !== 200) throw new Error(`warm-up: ${r.status} ${r.text}`);
        }
        const key = randomUUID();
        const before = await w.effects();
        const results = await Promise.all(
          Array.from({ length: N }, (_, i) => sendVia(i % 2 === 0 ? w.caller.api : other, w.request, key)),
        );
        const first = await checkOneEffect(t, w, results, before);
        for (const api of [w.caller.api, other]) {
          const later = await sendVia(api, w.request, key);
          t.is(later.headers.get(REPLAYED), 'true');
          t.deepEqual(later.body, first.body);
        }
      });
    }
  }
});
