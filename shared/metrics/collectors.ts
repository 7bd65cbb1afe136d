// The one set of metric collectors of a process (a prom-client Registry). Every metric of shared/metrics registers
// here, at import, so a hook in a service is a plain function call with nothing to pass around; the set is only read
// when /metrics is scraped (endpoint.ts). A process that never serves /metrics (the CLI, a test's in-process
// context) only pays for the counters it touches.
import { Registry } from 'prom-client';

export const collectors = new Registry();

/** Prefix of every metric of this service (Node's default metrics keep their standard names). */
export const PREFIX = 'payroute_';
