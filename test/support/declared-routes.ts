// The declared routes of both processes, enumerated from the tables the processes build (not a hand list), and
// the helpers the route-level tests share to call each of them.
import { getAddress } from 'viem';
import { rawHttp } from './raw-http-client.js';
import { buildAdminApp } from '../../admin/app.js';
import { listAdminRoutes, listProxyRoutes } from '../../admin/openapi/route-listing.js';
import type { ServiceContext } from '../../shared/context.js';

type Process = 'admin' | 'proxy';

export interface Declared {
  readonly process: Process;
  readonly method: string;
  readonly path: string;
  readonly public: boolean;
  readonly accepts: readonly string[];
  /** The code every caller of a kind it does not accept gets, when the route names one (else 0030 / AUTH.0002). */
  readonly refusal: string | undefined;
}

/** Every declared route of both processes, from the listing the API description is built from
 *  (admin/openapi/route-listing.ts): the access tests and the document read one table. */
export async function declaredRoutes(ctx: ServiceContext): Promise<Declared[]> {
  const listed = [...listAdminRoutes(buildAdminApp(ctx).routes), ...listProxyRoutes()];
  return listed.map((r) => ({
    process: r.process,
    method: r.method,
    path: r.path,
    public: r.access.public,
    accepts: r.access.accepts,
    refusal: r.access.refusal,
  }));
}

/** A value for each path parameter, well-formed where the route checks the form. */
export const SAMPLE: Record<string, string> = {
  planId: '1',
  agentId: `did:payroute:sandbox:${'0'.repeat(32)}`,
  holderAddress: getAddress(`0x${'ab'.repeat(20)}`),
  id: '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59',
  permissionHash: `0x${'cd'.repeat(32)}`,
  activate: 'true',
};

export const concrete = (path: string): string =>
  path
    .split('/')
    .map((s) => (s.startsWith(':') ? (SAMPLE[s.slice(1)] ?? 'x') : s))
    .join('/');

/** Runs the checks 8 at a time: thousands of requests, each waiting mostly on the other processes. */
export async function runAll(checks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < checks.length) {
      const check = checks[next];
      next += 1;
      await check?.();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

export const methodsOf = (r: Declared): string[] => (r.method === '*' ? ['GET', 'POST'] : [r.method]);

/**
 * What a caller of `kind` gets from a route by its declaration alone: `reaches` (the handler answers, whatever it
 * answers), or the 403 and code the declaration refuses the kind with.
 */
export function expectedFor(route: Declared, kind: string): { reaches: true } | { reaches: false; code: string } {
  if (route.accepts.includes(kind)) return { reaches: true };
  if (route.refusal !== undefined) return { reaches: false, code: route.refusal };
  return { reaches: false, code: kind === 'apiKey' ? 'BCK.AUTH.0002' : 'BCK.OAUTH.0030' };
}

export async function send(base: string, method: string, path: string, key?: string) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });
  const text = await r.text();
  let code: unknown;
  try {
    code = (JSON.parse(text) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  return { status: r.status, code };
}

/** `send` on a bare socket: the target goes out exactly as written (fetch would resolve its dot segments). */
export async function sendRaw(base: string, method: string, target: string, key?: string) {
  const headers: [string, Buffer][] = key === undefined ? [] : [['authorization', Buffer.from(`Bearer ${key}`)]];
  const r = await rawHttp(base, { method, target, headers }, 30_000);
  const split = r.text.indexOf('\r\n\r\n');
  let code: unknown;
  try {
    code = (JSON.parse(r.text.slice(split + 4)) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  return { status: r.status, code };
}
