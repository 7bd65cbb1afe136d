// What a process starts for its metrics: Node's default metrics (event loop, heap, GC, handles, CPU), a `process`
// label on every series (admin or proxy: one Prometheus job may scrape both), and, when its metrics port is set,
// the listener that serves /metrics there, away from the port the public reaches.
//
// The listener's server comes from the process (`createServer`, node:http's): shared/ does not import node:http
// (docs/architecture.md, "Layers"), so it is handed the factory and sees requests and responses only through the
// few members it uses.
import { collectDefaultMetrics } from 'prom-client';
import type { Config } from '../../config/index.js';
import { correlationId } from '../correlation.js';
import { toEnvelope, AppError, asAppError } from '../errors/app-error.js';
import type { Logger } from '../log.js';
import { METRICS_PATH } from './labels.js';
import { type MetricsAccess, metricsAnswer, metricsPortAccess } from './endpoint.js';
import { collectors } from './collectors.js';

export interface MetricsRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: { readonly authorization?: string | undefined };
}

export interface MetricsResponse {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string): unknown;
}

export interface MetricsServer {
  listen(port: number, host: string, listening: () => void): unknown;
  once(event: 'error', listener: (err: Error) => void): unknown;
  address(): unknown;
  close(done: () => void): unknown;
  closeAllConnections(): void;
}

export type ServerFactory = (handler: (req: MetricsRequest, res: MetricsResponse) => void) => MetricsServer;

type MetricsConfig = Pick<Config, 'HOST' | 'DOCS_URL' | 'METRICS_TOKEN' | 'ADMIN_METRICS_PORT' | 'PROXY_METRICS_PORT'>;

export interface RunningMetrics {
  /** The metrics port actually bound, when there is a listener. */
  readonly port: number | undefined;
  close(): Promise<void>;
}

function write(res: MetricsResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The metrics port's requests: /metrics (the path alone: a query string changes nothing), else 404. */
function metricsPortHandler(access: MetricsAccess, docsUrl: string) {
  return (req: MetricsRequest, res: MetricsResponse): void => {
    const id = correlationId(undefined);
    const path = (req.url ?? '/').split('?')[0];
    const answer =
      path === METRICS_PATH
        ? metricsAnswer(access, req.method, req.headers.authorization)
        : Promise.reject(new AppError('BCK.HTTP.0404', { details: `no route for ${req.method} ${path}` }));
    answer.then(
      (a) => write(res, a.status, a.headers, a.body),
      (err: unknown) => {
        const e = asAppError(err);
        const body = JSON.stringify(toEnvelope(e, id, docsUrl));
        write(res, e.httpStatus, { ...e.headers, 'content-type': 'application/json; charset=utf-8' }, body);
      },
    );
  };
}

/** Starts the metrics of process `name`; its metrics port (ADMIN_METRICS_PORT / PROXY_METRICS_PORT) if set. */
export async function startMetrics(
  name: 'admin' | 'proxy',
  config: MetricsConfig,
  log: Logger,
  createServer: ServerFactory,
  /** A proxy worker's slot (0 to PROXY_WORKERS - 1, kept by its replacement): a bounded label. */
  worker?: string | undefined,
): Promise<RunningMetrics> {
  collectors.setDefaultLabels(worker === undefined ? { process: name } : { process: name, worker });
  collectDefaultMetrics({ register: collectors });
  const wanted = name === 'admin' ? config.ADMIN_METRICS_PORT : config.PROXY_METRICS_PORT;
  if (wanted === undefined) return { port: undefined, close: () => Promise.resolve() };
  const server = createServer(metricsPortHandler(metricsPortAccess(config.METRICS_TOKEN), config.DOCS_URL));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, config.HOST, resolve);
  });
  const addr = server.address();
  const port =
    typeof addr === 'object' && addr !== null && 'port' in addr && typeof addr.port === 'number' ? addr.port : wanted;
  log.info({ host: config.HOST, port }, 'metrics listening');
  return {
    port,
    close: async () => {
      // A scraper keeps its connection open between scrapes: close it rather than wait for it.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
