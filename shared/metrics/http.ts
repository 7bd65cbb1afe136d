// HTTP requests of both processes, by method, route template and status. The template is the route's declared
// pattern (`/api/v1/agents/:agentId`), never the path: ids and unknown paths must not become label values.
import { Counter, Histogram } from 'prom-client';
import { HTTP_METHODS, ROUTE_UNMATCHED, bounded, routeLabel, statusLabel } from './labels.js';
import { PREFIX, collectors } from './collectors.js';

const labelNames = ['method', 'route', 'status'] as const;

const requests = new Counter({
  name: `${PREFIX}http_requests_total`,
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames,
  registers: [collectors],
});

const duration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time from a request arriving to its answer ending, by method, route template and status.',
  labelNames,
  // Router calls relay a merchant (seconds); a streamed answer may last minutes (ROUTER_STREAM_MAX_MS).
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [collectors],
});

/**
 * The children of each label combination, kept: prom-client hashes the label object on every `inc`/`observe`,
 * which is measurable on the proxy's hot path. Bounded by the label sets themselves.
 */
const children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<string> }>();

function childrenOf(method: string, route: string, status: string) {
  const key = `${method} ${route} ${status}`;
  let c = children.get(key);
  if (c === undefined) {
    const labels = { method, route, status };
    c = { count: requests.labels(labels), time: duration.labels(labels) };
    children.set(key, c);
  }
  return c;
}

/** A request being timed; `route` is set once a route took it (else it stays `unmatched`). */
export interface HttpObservation {
  route: string;
}

/** What of a response is needed: its status, and the event that says it ended (finished, or its client left). */
export interface ClosingResponse {
  readonly statusCode: number;
  once(event: 'close', listener: () => void): unknown;
}

/** Starts timing a request; it is counted once its response closes, with the status it was answered with. */
export function observeRequest(method: string | undefined, res: ClosingResponse): HttpObservation {
  const started = performance.now();
  const observation: HttpObservation = { route: ROUTE_UNMATCHED };
  res.once('close', () => {
    const c = childrenOf(bounded(HTTP_METHODS, method), routeLabel(observation.route), statusLabel(res.statusCode));
    c.count.inc();
    c.time.observe((performance.now() - started) / 1000);
  });
  return observation;
}
