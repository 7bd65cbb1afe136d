// What every k6 script here shares: its variables, with the defaults of `npm run loadtest:stack`'s fixed ports
// (loadtest/world.ts DEFAULT_PORTS); the loopback-only base URL; a constant load whose thresholds are on correctness
// only (never on times), so that k6 exits non-zero when a check or a request failed; and the check of a paid route.
// k6 loads the very file an import names, so the scripts import this one as './common.ts' (tsconfig:
// allowImportingTsExtensions, type-checking only).
import { fail } from 'k6';
import type { Response } from 'k6/http';
import type { Options } from 'k6/options';

/** A variable given with `-e NAME=...` (or in k6's environment); `dflt` when absent; the iteration fails without. */
export function env(name: string, dflt?: string): string {
  const v = __ENV[name] ?? dflt;
  if (v === undefined || v === '') fail(`${name} is required`);
  return v as string;
}

export const BASE_URL = env('BASE_URL', 'http://127.0.0.1:8080');
// Local targets only: these are loopback loads.
if (!/^http:\/\/127\.0\.0\.1(:\d+)?$/.test(BASE_URL)) fail('BASE_URL must be http://127.0.0.1[:port]');

/** The free JSON upstream of `loadtest/servers.ts upstream`. */
export const targetUrl = (): string => env('TARGET_URL', 'http://127.0.0.1:9101/free');
/** The paid route of the @x402/express v2 merchant of `loadtest/servers.ts merchant`. */
export const paidUrl = (): string => env('PAID_URL', 'http://127.0.0.1:9100/paid');

/** Every check passed and no request failed: a broken router fails the run, a slow one does not. */
export const CORRECTNESS: NonNullable<Options['thresholds']> = {
  checks: ['rate==1'],
  http_req_failed: ['rate==0'],
};

/** VUS (default `vus`) virtual users calling back to back for DURATION (default 30s), under CORRECTNESS. */
export function constantLoad(name: string, vus: number, gracefulStop: string, more: Options = {}): Options {
  return {
    scenarios: {
      [name]: {
        executor: 'constant-vus',
        vus: Number(env('VUS', String(vus))),
        duration: env('DURATION', '30s'),
        gracefulStop,
      },
    },
    thresholds: CORRECTNESS,
    summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
    ...more,
  };
}

interface RouteAnswer {
  status: number;
  paid: boolean;
  payment?: { status: string };
}

/** A router route's 200 relaying the merchant's 200: paid and settled (`paid`), or relayed unpaid. */
export function routed(r: Response, paid: boolean): boolean {
  if (r.status !== 200) return false;
  const a = r.json() as unknown as RouteAnswer;
  return a.status === 200 && (paid ? a.paid && a.payment?.status === 'Settled' : !a.paid);
}
