// k6, the benchmark's scenario 4: the load of the proxy memory check: 200k free relays (the requests of relay.ts,
// bounded by count and by time), while the proxy's VmRSS is sampled from outside (/proc/<pid>/status). The Node
// runner (loadtest/bench-router.ts) does the sampling; with k6, sample the proxy's VmRSS with e.g.
// `while sleep 0.25; do grep VmRSS /proc/$PID/status; done`. The defaults are the ports of `npm run loadtest:stack`:
//
//   k6 run -e API_KEY=... -e DELEGATION_ID=... [-e BASE_URL=http://127.0.0.1:8080] \
//          [-e TARGET_URL=http://127.0.0.1:9101/free] [-e REQUESTS=200000] [-e MAX_DURATION=180s] loadtest/k6/relay-soak.ts
import type { Options } from 'k6/options';
import { CORRECTNESS, env } from './common.ts';

export { default } from './relay.ts';

export const options: Options = {
  scenarios: {
    soak: {
      executor: 'shared-iterations',
      vus: Number(env('VUS', '32')),
      iterations: Number(env('REQUESTS', '200000')),
      maxDuration: env('MAX_DURATION', '180s'),
    },
  },
  thresholds: CORRECTNESS,
  discardResponseBodies: true,
};
